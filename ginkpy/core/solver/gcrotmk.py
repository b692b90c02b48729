from ginkpy.core.solver.gmres import Gmres as Gcrotmk  # placeholder
