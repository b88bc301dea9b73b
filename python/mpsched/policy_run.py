"""Trained policies as schedulers: ``scheduler = "edar"`` or ``"edar:CHECKPOINT"`` on a
multipath flow runs EdAR's Q-network inside the simulator, in Rust (``mpsched-policy``): at
every transmission interval (minimum subflow RTT) the network reads the flow's observation and
answers normal or redundant. ``edar`` alone uses the checkpoint shipped with the package
(:data:`DEFAULT_CHECKPOINT`).

:func:`mpsched.run` (hence ``mpsched run`` and ``mpsched compare``) sends scenarios with such a
flow here. One flow per scenario may use a trained policy. The results are those of the
simulation with the flow's scheduler set to ``external-mode`` (the resolved scenario says so);
the flows table and the summary name the policy instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

from . import _core

DEFAULT_CHECKPOINT = Path(__file__).resolve().parent / "agents" / "checkpoints" / "edar-default"
POLICY_SCHEDULERS = ("edar",)

#: Decision statistics of the last policy run in this process (wall-clock: not in the results).
last_stats: Dict[str, Any] = {}


def policy_checkpoint(name: Any) -> Optional[str]:
    """The checkpoint of a policy scheduler name (``edar``, ``edar:PATH``), else None."""
    if not isinstance(name, str):
        return None
    if name == "edar":
        return str(DEFAULT_CHECKPOINT)
    if name.startswith("edar:") and len(name) > len("edar:"):
        return name[len("edar:") :]
    return None


def policy_label(name: str) -> str:
    """A directory-name-safe label of a policy scheduler: ``edar`` or ``edar-STEM`` (the
    checkpoint file's name without its extension)."""
    from .agents.checkpoint import checkpoint_paths

    ckpt = policy_checkpoint(name)
    if ckpt is None or name == "edar":
        return name
    stem = checkpoint_paths(ckpt)[0].stem
    safe = "".join(c if c.isalnum() or c in ".-" else "-" for c in stem).strip(".-") or "checkpoint"
    return f"{name.split(':', 1)[0]}-{safe}"


def checkpoint_digest(name: str) -> str:
    """SHA-256 over a policy scheduler's checkpoint (description, then weights): results of
    runs with different weights must not share a scenario hash. Raises CheckpointError."""
    import hashlib

    from .agents.checkpoint import CheckpointError, checkpoint_paths

    ckpt = policy_checkpoint(name)
    if ckpt is None:
        raise ValueError(f"{name!r} is not a policy scheduler")
    h = hashlib.sha256()
    for part in checkpoint_paths(ckpt):
        try:
            h.update(Path(part).read_bytes())
        except OSError as e:
            raise CheckpointError(f"{part}: {e.strerror or e}") from None
    return h.hexdigest()


def _policy_flows(scenario: Mapping[str, Any]) -> list:
    flows = scenario.get("flows")
    if not isinstance(flows, list):
        return []
    return [
        i
        for i, f in enumerate(flows)
        if isinstance(f, dict) and policy_checkpoint(f.get("scheduler")) is not None
    ]


def has_policy_flow(scenario: Mapping[str, Any]) -> bool:
    """Whether a flow of ``scenario`` is scheduled by a trained policy."""
    return bool(_policy_flows(scenario))


def maybe_run(loaded: Any, seed: Optional[int]) -> Optional[Any]:
    """Runs a loaded scenario (:class:`mpsched.scenario.LoadedScenario`) if a flow uses a
    trained policy and returns its Results, else None."""
    if not _policy_flows(loaded.data):
        return None
    sc = loaded.data
    if loaded.path is not None:
        from .matrix import resolve_trace_paths

        sc = resolve_trace_paths(sc, loaded.base_dir)
    return run_with_policy(sc, loaded.source, loaded.base_dir, seed)


def run_with_policy(sc: Dict[str, Any], source: str, base: Path, seed: Optional[int]) -> Any:
    from .agents.checkpoint import CheckpointError, load_checkpoint
    from .agents.edar import expected_shapes
    from .envs._spec import EnvConfigError, prepare
    from .results import Results

    idx = _policy_flows(sc)
    if len(idx) > 1:
        raise _core.ScenarioError(
            f"{source}: flows[{idx[1]}].scheduler: only one flow per scenario can use a trained policy"
        )
    f = idx[0]
    flow = sc["flows"][f]
    name = flow["scheduler"]
    ckpt = policy_checkpoint(name)
    ckpt_path = Path(ckpt)
    if name != "edar" and not ckpt_path.is_absolute():
        ckpt_path = Path.cwd() / ckpt_path
    try:
        desc, _, js, _ = load_checkpoint(ckpt_path, "edar", expected_shapes)
    except CheckpointError as e:
        raise _core.ScenarioError(f"{source}: flows[{f}].scheduler: {e}") from None
    n_paths = len(flow.get("paths", [])) if isinstance(flow.get("paths"), list) else 1
    trained_paths = desc.get("obs", {}).get("max_paths", 4)
    max_paths = max(n_paths, trained_paths if isinstance(trained_paths, int) else 4)
    if max_paths > 8:
        raise _core.ScenarioError(
            f"{source}: flows[{f}].paths: a trained policy handles at most 8 paths, got {n_paths}"
        )
    if seed is None:
        own = sc.get("sim", {}).get("seed", 1) if isinstance(sc.get("sim"), dict) else 1
        seed = own if isinstance(own, int) and not isinstance(own, bool) and own >= 0 else 1
    try:
        prepared = prepare(
            sc,
            action="mode",
            flow=f,
            interval="min-rtt",
            max_paths=max_paths,
            history=int(desc["net"]["history"]),
            initial_mode="redundant",
        )
    except EnvConfigError as e:
        raise _core.ScenarioError(f"{source}: {e}") from None
    spec = json.loads(prepared.spec_json)
    spec["source"] = source
    raw, stats = _core.run_edar(json.dumps(spec), int(seed), str(js))
    # Name the policy where the results name schedulers.
    raw = dict(raw)
    flows_tab = dict(raw["flows"])
    scheds = list(flows_tab.get("scheduler", []))
    if f < len(scheds):
        scheds[f] = name
        flows_tab["scheduler"] = scheds
    raw["flows"] = flows_tab
    summary = json.loads(raw["summary"])
    _rename(summary, flow.get("name"), name)
    raw["summary"] = json.dumps(summary)
    last_stats.clear()
    last_stats.update(dict(stats), checkpoint=str(js), variant=desc.get("variant"))
    return Results.from_core(raw)


def _rename(summary: Any, flow_name: Any, label: str) -> None:
    """Sets ``scheduler`` of the summary's entry for ``flow_name`` to ``label``."""
    flows = summary.get("flows") if isinstance(summary, dict) else None
    items = flows.values() if isinstance(flows, dict) else flows if isinstance(flows, list) else []
    for fl in items:
        if isinstance(fl, dict) and fl.get("name", flow_name) == flow_name and "scheduler" in fl:
            fl["scheduler"] = label


def decision_latency() -> Tuple[float, int]:
    """(mean ns per decision, decisions) of the last policy run."""
    return float(last_stats.get("mean_ns", 0.0)), int(last_stats.get("decisions", 0))
