"""Exact models of malleable-job schedules, and bounds valid for every schedule, under one name: the
problem's record, the notebook and scripts import them from here, and importing this module registers
the exact methods ``cpsat``, ``rigid-optimal`` and ``milp``. Each idea has its own module:

* :mod:`iosched.models.malleable_closed`: the closed-form bounds (per job, area);
* :mod:`iosched.models.malleable_lp`: the LP bounds (interval-indexed, completion-order, Lagrangian);
* :mod:`iosched.models.malleable_bounds`: the problem's bound, the largest of these;
* :mod:`iosched.models.malleable_grid`: the time grid both exact models share, and their scope;
* :mod:`iosched.models.malleable_cpsat`: CP-SAT (``cpsat``, ``rigid-optimal``) and its
  large-neighbourhood search;
* :mod:`iosched.models.malleable_milp`: the time-indexed MILP (``milp``), a cross-check of CP-SAT.
"""

from __future__ import annotations

from iosched.models.malleable_bounds import MODEL_OBJECTIVES, bound, bounds, gap_reference
from iosched.models.malleable_closed import closed_form_bounds, job_minima, srpt_completions
from iosched.models.malleable_cpsat import build_cpsat, cpsat, identical_jobs, rigid_optimal
from iosched.models.malleable_exact import exact
from iosched.models.malleable_grid import Grid, default_unit, make_grid, plan_schedule, schedule_plans
from iosched.models.malleable_milp import build_milp, milp, milp_variables

__all__ = ["MODEL_OBJECTIVES", "Grid", "bound", "bounds", "build_cpsat", "build_milp", "closed_form_bounds",
           "cpsat", "default_unit", "exact", "gap_reference", "identical_jobs", "job_minima", "make_grid", "milp",
           "milp_variables", "plan_schedule", "rigid_optimal", "schedule_plans", "srpt_completions"]
