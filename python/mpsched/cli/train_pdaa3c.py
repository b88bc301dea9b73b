"""``mpsched train pdaa3c``: PDAA3C's A3C with asynchronous worker processes (see
:mod:`mpsched.agents.pdaa3c`). Options come from :class:`~mpsched.agents.pdaa3c_args.Args`
(types, defaults and help from the field docs) as for ``train edar`` and ``train drl-cc``;
bad input is one ``error:`` line naming the argument and exit code 2."""

from typing import Any

from ..agents.pdaa3c_args import Args as Pdaa3cArgs
from .train import (
    DURATION_OPT,
    OUT_OPT,
    SCENARIO_OPT,
    SEED_OPT,
    OptionTable,
    _with_signature,
    check_training_input,
    options_from_args,
    run_training,
    train_app,
)

#: The Args fields `mpsched train pdaa3c` exposes, in --help order.
PDAA3C_OPTIONS: OptionTable = {
    "scenario": SCENARIO_OPT,
    "out": OUT_OPT,
    "workers": (("--workers", "-w"), {"min": 1, "max": 64}),
    "updates": (("--updates",), {"min": 1}),
    "max_minutes": (("--max-minutes",), {"min": 0.01}),
    "seed": SEED_OPT,
    "envs_per_worker": (("--envs-per-worker",), {"min": 1, "max": 64}),
    "duration_s": DURATION_OPT,
    "t_max": (("--t-max",), {"min": 1, "max": 1000}),
    "busy": (("--busy",), {"metavar": "next|wait"}),
}


def pdaa3c_command(**options: Any) -> None:
    """Train PDAA3C (pdaa3c.txt): A3C actor-learners in `--workers` processes update shared
    parameters asynchronously; the actor chooses among the subflows ranked by the letter's
    subflow quality Q (eqs. 4-5) every 100 ms.

    Writes the policy file `pdaa3c.{json,safetensors}`, `train.json` (seed, workers, speed)
    and TensorBoard logs under `runs/` to the output directory. Run the policy with
    `mpsched run SCENARIO --scheduler policy:DIR/pdaa3c.json`.
    """
    from ..agents.pdaa3c_args import resolve_scenario

    args = Pdaa3cArgs(**options)
    check_training_input(args, resolve_scenario)
    from ..agents.pdaa3c import train as train_pdaa3c

    run_training(
        train_pdaa3c,
        args,
        lambda r: (
            f"trained in {r.wall_s:.1f} s: {r.env_steps_per_s:.1f} env steps/s in the "
            f"workers, {r.updates / max(r.wall_s, 1e-9):.1f} updates/s"
        ),
    )


train_app.command("pdaa3c")(
    _with_signature(pdaa3c_command, options_from_args(Pdaa3cArgs, PDAA3C_OPTIONS))
)
