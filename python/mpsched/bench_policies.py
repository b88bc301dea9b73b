"""``mpsched bench --policies``: decision latency of exported policies in the Rust runtime,
against the same forward pass in PyTorch, measured in one run.

Networks (the policy issue's sizes): a 2×64 MLP actor over 46 inputs (a 4-path scheduler's
observation) with an argmax head; EdAR's shipped Q-network (``edar-p``, history 6, 4 paths);
DRL-CC's DDPG actor, an LSTM(64) over 10 flows of 8 features then 2×128 and a tanh head. Rust:
the mean over a batch of decisions made one after another in the runtime (no Python between
them). PyTorch: one observation per call under ``torch.no_grad()`` (how an agent decides), one
thread.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy as np

from . import _core


def _time(fn: Callable[[], Any], repeats: int) -> float:
    """Least wall time of ``repeats`` calls (s)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _networks(torch: Any) -> Dict[str, Any]:
    nn = torch.nn
    torch.manual_seed(0)
    return {
        "mlp 2x64 (46 inputs, argmax)": (
            nn.Sequential(nn.Linear(46, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 4)),
            46, {"head": "argmax"},
        ),
        "ddpg lstm(64)+2x128 (10 flows)": (
            nn.Sequential(nn.LSTM(8, 64, batch_first=True), nn.Linear(64, 128), nn.ReLU(),
                          nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 2)),
            80, {"head": "tanh", "low": [-1.0, -1.0], "high": [1.0, 1.0]},
        ),
    }  # fmt: skip


def _drl_cc_row(tmp: Path, rng: Any, decisions: int, repeats: int) -> Dict[str, Any]:
    """The shipped DRL-CC policy (``cc = "drl-cc"``: LSTM(64) over the running flows, 2×128
    actor) deciding with 10 running flows of 2 subflows: its file with 16 flow slots (the
    weights do not depend on the slot count), observations with random states, flows 0-9
    running, the target rotating over them. PyTorch: the agent's own batched actor
    (``DrlCcPolicy.act``), one observation per call."""
    import json
    import shutil

    from .agents.drl_cc import DrlCcPolicy
    from .envs.host import HostLayout
    from .scenario import SCENARIO_DIR

    src = SCENARIO_DIR.parent / "agents" / "checkpoints" / "drl-cc-default"
    desc = json.loads(src.with_suffix(".json").read_text())
    desc["obs"]["max_flows"] = 16
    (tmp / "drl-cc-16.json").write_text(json.dumps(desc))
    shutil.copy(src.with_suffix(".safetensors"), tmp / "drl-cc-16.safetensors")
    lay = HostLayout(16, desc["obs"]["max_subflows"], 1)
    obs = rng.uniform(0.0, 1.0, (decisions, lay.size)).astype(np.float32)
    o = lay.offsets
    obs[:, o["flow_mask_offset"] : o["flow_mask_offset"] + 16] = np.arange(16) < 10
    target = lay.flows(obs)[:, 0, :, list(_flow_features()).index("target")]
    target[:] = np.arange(16)[None, :] == (np.arange(decisions) % 10)[:, None]
    pol = _core.Policy(str(tmp / "drl-cc-16.json"))
    rust = _time(lambda: pol.act(obs), repeats) / decisions
    torch_pol = DrlCcPolicy.load(tmp / "drl-cc-16.json")
    one = [obs[i : i + 1] for i in range(min(decisions, 500))]
    py = _time(lambda: [torch_pol.act(x) for x in one], repeats) / len(one)
    name = "drl-cc (shipped: LSTM(64) + 2x128, 10 flows)"
    return {"name": name, "rust_us": rust * 1e6, "torch_us": py * 1e6}


def _flow_features() -> Any:
    from .envs.scheduler import FLOW_FEATURES

    return FLOW_FEATURES


def bench_policies(decisions: int = 2000, repeats: int = 5) -> List[Dict[str, Any]]:
    import torch

    from .agents.edar import EdarPolicy
    from .envs import ObsLayout
    from .policies import export, reference_forward
    from .scenario import SCENARIO_DIR

    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    rows: List[Dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (module, n_in, head) in _networks(torch).items():
            js, _ = export(module, Path(tmp) / name.split()[0], input_size=n_in, **head)
            net = _core.Net(str(js))
            obs = rng.standard_normal((decisions, n_in)).astype(np.float32)
            rust = _time(lambda n=net, o=obs: n.forward(o), repeats) / decisions
            one = [obs[i : i + 1] for i in range(min(decisions, 500))]
            py = _time(
                lambda m=module, xs=one: [reference_forward(m, o) for o in xs], repeats
            ) / len(one)
            rows.append({"name": name, "rust_us": rust * 1e6, "torch_us": py * 1e6})
        ck = SCENARIO_DIR.parent / "agents" / "checkpoints" / "edar-p.json"
        edar = _core.EdarNet(str(ck))
        layout = ObsLayout(4, edar.history, 0)
        obs = np.abs(rng.standard_normal((decisions, layout.size))).astype(np.float32)
        rust = _time(lambda: edar.q_values(obs, 4), repeats) / decisions
        policy = EdarPolicy.load(ck)
        one = [obs[i : i + 1] for i in range(min(decisions, 500))]
        py = _time(lambda: [policy.q_values(o, layout) for o in one], repeats) / len(one)
        rows.append(
            {"name": "edar-p (history 6, 4 paths)", "rust_us": rust * 1e6, "torch_us": py * 1e6}
        )
        rows.append(_drl_cc_row(Path(tmp), rng, decisions, repeats))
    for r in rows:
        r["speedup"] = r["torch_us"] / r["rust_us"]
    return rows
