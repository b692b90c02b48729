from ginkpy.core.solver.least_squares import LeastSquaresSolver as Lsmr
