"""``mpsched train``: train learning agents (sub-commands per algorithm).

``mpsched train edar`` runs EdAR's offline learning (EdAR-p) and, with ``--steps N``, online
learning (EdAR-o); see :mod:`mpsched.agents.edar`. ``mpsched train drl-cc`` runs DRL-CC's
Algorithm 1 (DDPG with an LSTM over the host's flows); see :mod:`mpsched.agents.drl_cc`.
``mpsched train rlds`` trains RLDS-proxy (a DQN stand-in for PDAA3C's RLDS baseline); see
:mod:`mpsched.agents.rlds`. ``mpsched train reles`` trains ReLeS (NAF + LSTM split ratios,
MPTCP-RL's fourth baseline); see :mod:`mpsched.agents.reles`. Their
options are generated from the agents' ``Args`` (types, defaults, and help from the field
docs), so the commands and the Python API cannot drift apart. Bad input (a scenario, offline
data, an option) is one ``error:`` line and exit code 2; a failed run leaves no output
directory.
"""

import ast
import dataclasses
import inspect
import time
import typing
from pathlib import Path
from typing import Annotated, Any, Callable, Dict, List, Tuple

import typer

from ..agents.drl_cc_args import Args as DrlCcArgs
from ..agents.edar_args import Args
from ..agents.mptcp_rl_args import Args as MptcpRlArgs
from ..agents.reles_args import Args as RelesArgs
from ..agents.rlds_args import Args as RldsArgs
from .errors import OneLineErrorGroup, fail, require_extra

train_app = typer.Typer(
    name="train",
    cls=OneLineErrorGroup,
    help="Train learning agents (EdAR, DRL-CC, RLDS-proxy, MPTCP-RL, ReLeS). Checkpoints: safetensors + JSON; logs: TensorBoard.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
)

#: An option table: Args field -> (option names, bounds/metavar). Types, defaults and help
#: come from the Args dataclass itself (:func:`options_from_args`).
OptionTable = Dict[str, Tuple[Tuple[str, ...], Dict[str, Any]]]

#: Option specs every `mpsched train` command shares (one definition, so names and bounds agree).
SCENARIO_OPT = (("--scenario",), {"metavar": "SCENARIO"})
OUT_OPT = (("--out", "-o"), {"metavar": "DIR"})
SEED_OPT = (("--seed", "-s"), {"min": 0, "max": 2**31 - 1})
DURATION_OPT = (("--duration",), {"min": 0.1})
MAX_PATHS_OPT = (("--max-paths",), {"min": 1, "max": 8})
THREADS_OPT = (("--threads",), {"min": 1, "max": 256})
#: The episode and replay options of the off-policy agents trained on one-flow scheduler
#: episodes (`train rlds`, `train reles`), in --help order around their own options.
EPISODE_OPTS: OptionTable = {
    "total_transitions": (("--transitions",), {"min": 1}),
    "seed": SEED_OPT,
    "first_episode_seed": (("--first-episode-seed",), {"min": 0, "max": 2**31 - 1}),
    "duration_s": DURATION_OPT,
    "max_paths": MAX_PATHS_OPT,
}
REPLAY_OPTS: OptionTable = {
    "learning_starts": (("--learning-starts",), {"min": 0}),
    "batch_size": (("--batch-size",), {"min": 1}),
    "buffer_size": (("--buffer-size",), {"min": 1}),
}

#: The Args fields `mpsched train edar` exposes, in --help order: option names and bounds.
#: Types, defaults and help come from Args itself.
EDAR_OPTIONS: OptionTable = {
    "scenario": SCENARIO_OPT,
    "offline_data": (("--offline-data",), {"metavar": "PARQUET"}),
    "out": OUT_OPT,
    "steps": (("--steps",), {"min": 0}),
    "seed": SEED_OPT,
    "offline_episodes": (("--offline-episodes",), {"min": 1}),
    "offline_iterations": (("--offline-iterations",), {"min": 1}),
    "online_iterations": (("--online-iterations",), {"min": 1}),
    "duration_s": DURATION_OPT,
    "max_paths": MAX_PATHS_OPT,
    "init": (("--init",), {"metavar": "CHECKPOINT"}),
}


def field_docs(cls: type) -> Dict[str, str]:
    """The docstrings written under a dataclass's fields (``x: int = 1`` then ``\"\"\"...\"\"\"``),
    by field name, each on one line."""
    tree = ast.parse(inspect.getsource(inspect.getmodule(cls)))
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
    docs: Dict[str, str] = {}
    for stmt, after in zip(node.body, node.body[1:]):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[stmt.target.id] = " ".join(after.value.value.split())
    return docs


def args_defaults(cls: type = Args) -> Dict[str, Any]:
    """Each field's default (``default_factory`` called)."""
    out = {}
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
        else:
            out[f.name] = f.default
    return out


def options_from_args(cls: type, options: OptionTable) -> List[inspect.Parameter]:
    """Typer parameters for the ``options`` fields of dataclass ``cls``: the field's type, its
    default, its doc as help (sentence-cased), the option names and bounds of ``options``."""
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    defaults = args_defaults(cls)
    params = []
    for name, (flags, extra) in options.items():
        doc = docs.get(name, "")
        help_text = doc[:1].upper() + doc[1:] + ("." if doc and not doc.endswith(".") else "")
        default = defaults[name]
        option = typer.Option(
            *flags, help=help_text, show_default=default not in (None, []), **extra
        )
        params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=Annotated[hints[name], option],
            )
        )
    return params


def _with_signature(
    fn: Callable[..., None], params: List[inspect.Parameter]
) -> Callable[..., None]:
    """``fn`` with the signature typer reads its options from."""
    fn.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
    fn.__annotations__ = {p.name: p.annotation for p in params}
    fn.__annotations__["return"] = None
    return fn


def edar_command(**options: Any) -> None:
    """Train EdAR (edar.txt): offline learning from always-normal / always-redundant
    trajectories (EdAR-p), then ε-greedy online learning (EdAR-o).

    Writes `edar-p.{json,safetensors}`, `edar-o.*` (with `--steps` > 0), `offline.parquet` (when
    collected) and TensorBoard logs under `runs/` to the output directory. Use a checkpoint with
    `mpsched run SCENARIO --scheduler edar:DIR/edar-o.json`.
    """
    from rich.console import Console

    from .. import _core
    from ..scenario import load as load_scenario

    args = Args(**{k: list(v) if isinstance(v, (list, tuple)) else v for k, v in options.items()})
    if args.scenario == Args().scenario and not Path(args.scenario[0]).is_file():
        # The default, outside a checkout: the copy shipped with the package.
        from ..scenario import shipped_scenario

        args.scenario = [str(shipped_scenario(Path(args.scenario[0]).name))]
    for s in args.scenario:
        try:  # the scenario loader's message, as `mpsched run` gives it
            load_scenario(s)
        except _core.ScenarioError as e:
            fail(str(e))
    _ready_to_train(Path(args.out))
    from ..agents.checkpoint import CheckpointError
    from ..agents.edar import DataError, train
    from ..envs import EnvConfigError

    console = Console(stderr=True)
    started = time.perf_counter()
    try:
        written = train(args, log=lambda m: console.print(m))
    except (EnvConfigError, DataError, CheckpointError, _core.ScenarioError) as e:
        fail(str(e))
    except ImportError as e:
        fail(f"training needs the `rl` extra (torch, tensorboard, safetensors): {e}", code=1)
    console.print(f"trained in {time.perf_counter() - started:.1f} s")
    for name, path in written.items():
        typer.echo(f"{name}: {path}")


train_app.command("edar")(_with_signature(edar_command, options_from_args(Args, EDAR_OPTIONS)))


def _ready_to_train(out: Path) -> None:
    """``--out`` is a directory or does not exist yet, and the ``rl`` extra is installed."""
    if out.exists() and not out.is_dir():
        fail(f"--out: {out}: exists and is not a directory")
    require_extra(["gymnasium", "torch"], "mpsched train")


def check_training_input(args: Any, resolve_scenario: Callable[[str], Path]) -> None:
    """``args.scenario`` resolved and loadable (the scenario loader's message, as `mpsched
    run` gives it), ``args.out`` usable and the ``rl`` extra installed; else exit 2."""
    from .. import _core
    from ..scenario import load as load_scenario

    try:
        args.scenario = str(resolve_scenario(args.scenario))
        load_scenario(args.scenario)
    except _core.ScenarioError as e:
        fail(str(e))
    _ready_to_train(Path(args.out))


def run_training(train_fn: Callable[..., Any], args: Any, summary: Callable[[Any], str]) -> None:
    """``train_fn(args, log=...)`` logging to stderr, then ``summary(result)`` (stderr) and
    the files written (``result.written``, stdout); bad input (env, checkpoint, scenario, a
    value) is one ``error:`` line and exit 2, a missing extra exit 1."""
    from rich.console import Console

    from .. import _core
    from ..agents.checkpoint import CheckpointError
    from ..envs import EnvConfigError

    console = Console(stderr=True)
    try:
        result = train_fn(args, log=lambda m: console.print(m))
    except (EnvConfigError, CheckpointError, _core.ScenarioError, ValueError) as e:
        fail(str(e))
    except ImportError as e:
        fail(f"training needs the `rl` extra (torch, tensorboard, safetensors): {e}", code=1)
    console.print(summary(result))
    for name, path in result.written.items():
        typer.echo(f"{name}: {path}")


#: The Args fields `mpsched train drl-cc` exposes, in --help order.
DRLCC_OPTIONS: OptionTable = {
    "scenario": SCENARIO_OPT,
    "out": OUT_OPT,
    "total_transitions": (("--transitions",), {"min": 1}),
    "seed": SEED_OPT,
    "num_envs": (("--num-envs",), {"min": 1, "max": 256}),
    "duration_s": DURATION_OPT,
    "interval_ms": (("--interval-ms",), {"min": 1.0}),
    "cwnd_step": (("--cwnd-step",), {"min": 0.1}),
    "max_flows": (("--max-flows",), {"min": 1, "max": 64}),
    "torch_threads": THREADS_OPT,
}


def drl_cc_command(**options: Any) -> None:
    """Train DRL-CC (drl-cc.txt): one DDPG agent with an LSTM representation of the host's
    flows sets the windows of one target MPTCP flow per epoch (Algorithm 1), offline in the
    randomised host scenario.

    Writes the policy file `drl-cc.{json,safetensors}` (docs/drl-cc.md) and TensorBoard logs
    under `runs/` to the output directory.
    """
    from ..agents.drl_cc_args import resolve_scenario

    _train_with(
        DrlCcArgs(**options),
        resolve_scenario,
        "drl_cc",
        lambda r: (
            f"trained in {r.wall_s:.1f} s: {r.transitions_per_s:.0f} transitions/s, "
            f"{r.updates_per_s:.0f} updates/s"
        ),
    )


def _train_with(args: Any, resolve: Callable[[str], Path], agent: str, summary: Callable) -> None:
    """:func:`check_training_input`, then :func:`run_training` of ``mpsched.agents.<agent>``'s
    ``train`` (imported only then: torch loads with it)."""
    import importlib

    check_training_input(args, resolve)
    try:
        train = importlib.import_module(f"..agents.{agent}", __package__).train
    except ImportError as e:
        fail(f"training needs the `rl` extra (torch, tensorboard, safetensors): {e}", code=1)
    run_training(train, args, summary)


train_app.command("drl-cc")(
    _with_signature(drl_cc_command, options_from_args(DrlCcArgs, DRLCC_OPTIONS))
)


#: The Args fields `mpsched train rlds` exposes, in --help order.
RLDS_OPTIONS: OptionTable = {
    "scenario": SCENARIO_OPT,
    "out": OUT_OPT,
    **EPISODE_OPTS,
    **REPLAY_OPTS,
    "start_e": (("--start-e",), {"min": 0.0, "max": 1.0}),
    "end_e": (("--end-e",), {"min": 0.0, "max": 1.0}),
    "torch_threads": THREADS_OPT,
}


def rlds_command(**options: Any) -> None:
    """Train RLDS-proxy, a stand-in for RLDS (PDAA3C's baseline; its state, action and reward
    were not retrieved): a Double DQN choosing one subflow per 100 ms from each subflow's free
    bandwidth, throughput, cwnd, inflight and loss, reward Σ log throughput
    (shared/specs/rl-baselines.md §4).

    Writes the policy file `rlds.{json,safetensors}` and TensorBoard logs under `runs/` to the
    output directory. Use it with `mpsched run SCENARIO --scheduler policy:DIR/rlds.json`.
    """
    from ..agents.rlds_args import resolve_scenario

    _train_with(
        RldsArgs(**options),
        resolve_scenario,
        "rlds",
        lambda r: (
            f"trained in {r.wall_s:.1f} s: {r.transitions} transitions, "
            f"{r.episodes} episodes, {r.updates} updates"
        ),
    )


train_app.command("rlds")(_with_signature(rlds_command, options_from_args(RldsArgs, RLDS_OPTIONS)))


#: The Args fields `mpsched train mptcp-rl` exposes, in --help order.
MPTCPRL_OPTIONS: OptionTable = {
    "scenario": SCENARIO_OPT,
    "out": OUT_OPT,
    "seed": SEED_OPT,
    "offline_episodes": (("--offline-episodes",), {"min": 1}),
    "offline_epochs": (("--offline-epochs",), {"min": 1}),
    "online_steps": (("--online-steps",), {"min": 1}),
    "sync_s": (("--sync",), {"min": 0.001}),
    "duration_s": DURATION_OPT,
    "torch_threads": THREADS_OPT,
}


def mptcp_rl_command(**options: Any) -> None:
    """Train MPTCP-RL (mptcp-rl.txt): one server-side PPO agent outputs per-path usage
    probabilities for every flow of the host (dmptcp picks each flow's path set in that
    order); offline on the traditional schedulers' transitions, then online with the exported
    policy deciding and the weights reloaded every `--sync` seconds of scenario time.

    Writes the policy file `mptcp-rl.{json,safetensors}` (`--scheduler policy:PATH`).
    """
    from ..agents.drl_cc_args import resolve_scenario

    _train_with(
        MptcpRlArgs(**options),
        lambda scenario: resolve_scenario(scenario, MptcpRlArgs().scenario),
        "mptcp_rl",
        lambda r: (
            f"trained in {r.wall_s:.1f} s wall, {r.cpu_s:.1f} s CPU (load {r.load[0]:.1f} → "
            f"{r.load[1]:.1f}): {r.offline_transitions} offline transitions, "
            f"{r.online_steps} online decisions, {r.updates} updates"
        ),
    )


train_app.command("mptcp-rl")(
    _with_signature(mptcp_rl_command, options_from_args(MptcpRlArgs, MPTCPRL_OPTIONS))
)


#: The Args fields `mpsched train reles` exposes, in --help order.
RELES_OPTIONS: OptionTable = {
    "scenario": (("--scenario",), {"metavar": "SCENARIO[,SCENARIO...]"}),
    "out": OUT_OPT,
    **EPISODE_OPTS,
    "interval_ms": (("--interval",), {"min": 1.0}),
    **REPLAY_OPTS,
    "weight_low": (("--weight-low",), {}),
    "torch_threads": THREADS_OPT,
}


def reles_command(**options: Any) -> None:
    """Train ReLeS (Zhang et al., INFOCOM 2019; MPTCP-RL's fourth baseline): NAF with an LSTM
    over the last k state intervals sets every subflow's split ratio once per interval; the
    connection sends by weighted round robin over the subflows with window space
    (shared/specs/rl-baselines.md §3).

    Writes the policy file `reles.{json,safetensors}`, `train.json` and TensorBoard logs under
    `runs/` to the output directory. Use it with `mpsched run SCENARIO --scheduler
    policy:DIR/reles.json` (`--scheduler reles`: the shipped policy).
    """
    from .. import _core
    from ..agents.reles_args import resolve_scenarios
    from ..scenario import load as load_scenario

    args = RelesArgs(**options)
    try:
        paths = resolve_scenarios(args.scenario)
        for p in paths:
            load_scenario(p)
    except _core.ScenarioError as e:
        fail(str(e))
    if not paths:
        fail("--scenario: expected one or more scenario files, comma-separated")
    args.scenario = ",".join(str(p) for p in paths)
    _ready_to_train(Path(args.out))
    try:
        from ..agents.reles import train
    except ImportError as e:
        fail(f"training needs the `rl` extra (torch, tensorboard, safetensors): {e}", code=1)
    run_training(
        train,
        args,
        lambda r: (
            f"trained in {r.wall_s:.1f} s wall, {r.cpu_s:.1f} s CPU (load {r.load[0]:.1f} → "
            f"{r.load[1]:.1f}): {r.transitions} transitions, {r.episodes} episodes, "
            f"{r.updates} updates"
        ),
    )


train_app.command("reles")(
    _with_signature(reles_command, options_from_args(RelesArgs, RELES_OPTIONS))
)
