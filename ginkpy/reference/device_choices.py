"""The reference executor's answer to ``exec.device_choices()`` (see
``ginkpy/core/base/device_choices.py``): the host, where no launch costs anything."""
from __future__ import annotations

from ginkpy.core.base.device_choices import CycleChoice, DeviceChoices

REFERENCE_CHOICES = DeviceChoices(
    kind="reference",
    multigrid=CycleChoice("w", 1, 64, 0, "no launches to save on the host: the W-cycle, which needs the fewest "
                                         "iterations"),
    checks_values_on_host=True)
