"""The periodic problem's exact side, one module per idea:

* :mod:`iosched.models.periodic_bounds`: bounds valid for every schedule (the paper's eq. 5, the
  long-run LP) or every periodic pattern (contiguity cuts), and the problem's bound;
* :mod:`iosched.models.periodic_counts`: the period-capped integer bound over count vectors
  (cycles, volume, contiguity and blocking rows) and its best-first search;
* :mod:`iosched.models.periodic_compaction`: the compaction LP and ``persched-compact``;
* :mod:`iosched.models.periodic_milp`: the time-indexed MILP for a given period (``milp``);
* :mod:`iosched.models.periodic_trace`: ``trace-compact``, windows of fluid runs compacted;
* :mod:`iosched.models.periodic_leaf` and :mod:`iosched.models.periodic_exact`: ``exact``, the branch and
  bound over counts whose leaves' shortest periods are solved exactly.

Importing this module registers every method; the public names are here as before.
"""

from iosched.models import periodic_exact, periodic_trace  # noqa: F401  (register exact, trace-compact)
from iosched.models.periodic_bounds import (  # noqa: F401
    MAX_CUT_APPS,
    best_bound,
    bounds,
    build_longrun_model,
    contiguity_bound,
    contiguity_cuts,
    gap_reference,
    longrun_bound,
    paper_bound,
    pe,  # noqa: F401  (pyomo.environ, imported when used)
    timeline_bound,
)
from iosched.models.periodic_compaction import (  # noqa: F401
    HANDOVER_LP,
    MAX_LP_VARIABLES,
    SEARCH_SHARE,
    SECONDS_PER_LP_VARIABLE,
    assemble_pattern,
    build_compaction_model,
    check_compaction,
    compact,
    compaction_pattern,
    compaction_size,
    persched_compact,
    persched_mindil_compact,
    warm_solver,
)
from iosched.models.periodic_counts import capped_bound, relaxation, t_lower  # noqa: F401
from iosched.models.periodic_milp import (  # noqa: F401
    HANDOVER_MILP,
    MAX_MILP_CELLS,
    MAX_MILP_TERMS,
    MAX_PERIODS,
    PERIODS_CHECK,
    SECONDS_PER_MILP_CELL,
    Periods,
    Slots,
    build_milp,
    check_milp_size,
    default_slots,
    milp,
    milp_dilation,
    milp_pattern,
    solve_period,
)
