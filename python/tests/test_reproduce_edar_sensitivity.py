"""`mpsched reproduce edar --sensitivity` (issue 20): the edits of the swept parameters, the
pipeline in quick mode, bad input, and the committed full-seed sweep the docs quote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpsched.matrix import load_scenario
from mpsched.reproduce import edar as E
from mpsched.reproduce import edar_claims as C
from mpsched.reproduce import edar_sensitivity as S
from mpsched.reproduce import edar_sensitivity_params as SP
from mpsched.reproduce import protocol as P

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "reproductions" / "edar"


def _scenario(stem):
    return load_scenario(E.default_scenario_dir() / f"{stem}.toml")


def _ramp(sc):
    return [
        (e["at_s"], e.get("delay_ms"), e.get("loss", {}).get("p"), e.get("outage"))
        for e in sc["paths"][1]["schedule"]
    ]


def test_ramp_length_scales_the_steps_after_t1_and_keeps_t2():
    sc = _scenario("edar-handoff")
    S._ramp_length("edar-handoff", sc, 2.0)
    times = [t for t, *_ in _ramp(sc)]
    assert times == [20, 26, 32, 36, 40, 60, 66, 72, 76, 80]
    sc = _scenario("edar-handoff")
    S._ramp_length("edar-handoff", sc, 0.5)
    assert [t for t, *_ in _ramp(sc)] == [20, 21.5, 23, 24, 40, 60, 61.5, 63, 64, 80]


def test_ramp_depth_scales_loss_and_added_delay_not_the_return():
    sc = _scenario("edar-handoff")
    S._ramp_depth("edar-handoff", sc, 2.0)
    first = _ramp(sc)[:5]
    assert first == [
        (20, 70, 0.02, None),
        (23, 100, 0.1, None),
        (26, 150, 0.4, None),
        (28, None, None, True),
        (40, 50, 0.001, False),  # t2: back to the initial state
    ]


def test_settings_edits_touch_only_the_settings_handoff_process():
    sc = _scenario("edar-setting-2")
    S._handoff_rate("edar-setting-2", sc, 0.5)
    S._handoff_duration("edar-setting-2", sc, 2.0)
    h = sc["handoffs"][0]
    assert (h["rate_per_min"], h["duration_s"], h["outage_s"]) == (1.5, [20, 60], 4)
    sc, before = _scenario("edar-handoff"), _scenario("edar-handoff")
    S._handoff_rate("edar-handoff", sc, 2.0)
    S._ramp_length("edar-setting-1", sc, 2.0)  # the ramp edit only applies to the handoff case
    assert sc == before


def _handoff(stem, edit=None, x=None):
    sc = _scenario(stem)
    if edit is not None:
        edit(stem, sc, x)
    return sc


@pytest.mark.parametrize("stem", ["edar-setting-1", "edar-setting-5", "edar-fct-delay", "edar-fct-loss"])  # fmt: skip
def test_handoff_process_edits_change_exactly_their_field(stem):
    """`settings-handoff-loss ×2` doubles the handoff's loss and nothing else in the scenario
    copy; the outage likewise; the delay: the delay added to path 2's largest delay × x."""
    before = _handoff(stem)
    h0 = before["handoffs"][0]
    top = SP._largest(next(p for p in before["paths"] if p["name"] == "path2")["delay_ms"])
    assert h0["delay_ms"] == 2 * top  # ours: doubled
    expected = {
        S._handoff_loss: (2.0, "loss", {"model": "bernoulli", "p": 0.1}),
        S._handoff_outage: (2.0, "outage_s", 8),
        S._handoff_delay: (2.0, "delay_ms", 3 * top),
        S._handoff_rate: (0.5, "rate_per_min", 1.5),
    }
    for edit, (x, key, value) in expected.items():
        sc = _handoff(stem, edit, x)
        want = _handoff(stem)
        want["handoffs"][0][key] = value
        assert sc == want, edit.__name__
    assert _handoff(stem, S._handoff_delay, 0.5)["handoffs"][0]["delay_ms"] == 1.5 * top
    assert _handoff(stem, S._handoff_loss, 0.5)["handoffs"][0]["loss"]["p"] == 0.025
    assert _handoff(stem, S._handoff_outage, 0.5)["handoffs"][0]["outage_s"] == 2


def test_process_edits_leave_the_handoff_scenario_alone():
    for edit in (S._handoff_delay, S._handoff_loss, S._handoff_outage, S._handoff_duration):
        assert _handoff("edar-handoff", edit, 2.0) == _handoff("edar-handoff")


def test_params_are_typed_and_name_known_groups():
    assert len(S.BY_NAME) == len(S.PARAMS)
    hooks = {"scenario": "edit", "adapt": "adapt", "train": "train"}
    for p in S.PARAMS:
        assert p.kind in hooks and set(p.groups) <= set(E.runs.GROUPS)
        assert all((getattr(p, h) is None) == (k != p.kind) for k, h in hooks.items()), p.name
        assert len(p.values) == (1 if p.name == S.CONTROL else 2)
        assert set(p.fct) <= {label for label, _ in p.values} and (
            not p.fct or p.kind == "scenario"
        )
    assert S._epsilon(0.2) == (E.runs.ADAPT_STEPS, {"epsilon": 0.2})
    rate = S.BY_NAME["settings-handoff-rate"].units()
    assert [(u[0], u[2]) for u in rate] == [("×0.5", ("settings",)), ("×2", ("settings",)), ("×0.5 FCT", ("fct",)), ("×2 FCT", ("fct",))]  # fmt: skip
    assert [p.name for p in S.PARAMS if not p.by_default] == ["replay-capacity"]


def test_retraining_uses_the_shipped_training_with_one_value_changed(tmp_path):
    """The retraining's Args are the shipped EdAR-p's (its command's options among them) with
    the value, ``steps`` 0 (EdAR-p is written before the online phase) and the output."""
    meta = SP.shipped_train()
    opts = meta["command"].split()
    for flag, key in (("--offline-episodes", "offline_episodes"), ("--offline-iterations", "offline_iterations"), ("--seed", "seed")):  # fmt: skip
        assert int(opts[opts.index(flag) + 1]) == meta[key]
    assert [opts[i + 1] for i, o in enumerate(opts) if o == "--scenario"] == meta["scenario"]
    for p in (p for p in S.PARAMS if p.kind == "train"):
        for _label, x in p.values:
            train, adapt = p.train(x)
            args = S.train_args(train, tmp_path)
            changed = {k for k, v in vars(args).items() if k in meta and v != meta[k] and k != "core_units"}  # fmt: skip
            assert changed == {"scenario", "out", "steps"} | set(train), (p.name, changed)
            assert [Path(s).name for s in args.scenario] == [Path(s).name for s in meta["scenario"]]
            assert args.steps == 0 and all(getattr(args, k) == v for k, v in train.items())
            assert set(adapt) <= {"batch_size", "buffer_size"}
    assert S.BY_NAME["offline-updates"].train(3000.0) == ({"offline_iterations": 3000}, {})


def test_replay_capacity_does_not_bind():
    """Why `replay-capacity` is not run: no replay here ever holds 25,000 transitions."""
    from mpsched.agents.edar import Replay

    smallest = min(x for _, x in S.BY_NAME["replay-capacity"].values)
    assert max(E.runs.ADAPT_STEPS, SP.shipped_train()["steps"]) < smallest
    assert SP.shipped_train()["buffer_size"] > smallest
    assert Replay.tail.__doc__ and "newest" in Replay.tail.__doc__


def test_retrain_is_cached_by_its_values(tmp_path, monkeypatch):
    import mpsched.agents.edar as agent

    calls = []

    def fake_train(args, log):
        calls.append(args)
        Path(args.out).mkdir(parents=True)
        meta = {"train": {k: v for k, v in vars(args).items() if k != "core_units"}}
        (Path(args.out) / "edar-p.json").write_text(json.dumps(meta), encoding="utf-8")

    monkeypatch.setattr(agent, "train", fake_train)
    dest = tmp_path / "train"
    assert S.retrain({"batch_size": 32}, dest, False, print) == dest / "edar-p.json"
    S.retrain({"batch_size": 32}, dest, False, print)
    assert len(calls) == 1 and calls[0].batch_size == 32 and calls[0].offline_iterations == 6000
    S.retrain({"batch_size": 128}, dest, True, print)
    assert len(calls) == 2 and calls[1].batch_size == 128 and calls[1].offline_episodes == 2


def test_reference_values_leave_out_edar_o_and_other_seeds():
    claims, _ = P.load_committed(COMMITTED)
    values = S.reference_values(claims, (1001, 1002))
    assert values and all("edar-o" not in by for by in values.values())
    assert {s for by in values.values() for v in by.values() for s in v} == {1001, 1002}
    ho = values[("edar-handoff", None, "handoff_goodput")]
    assert ho["minrtt-norp"][1001] == claims["ho-gain-edar-p-handoff"].extra["per_seed"]["minrtt-norp"]["1001"]  # fmt: skip


def test_quick_sensitivity_end_to_end(tmp_path):
    """`--sensitivity --quick` for one scenario and one EdAR-o parameter: every value's claims
    are the affected ones, and the tables agree with result.json."""
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    from typer.testing import CliRunner

    from mpsched.cli import app

    out = tmp_path / "s"
    args = ["reproduce", "edar", "--sensitivity", "--quick", "--params", "handoff-ramp-length,epsilon"]  # fmt: skip
    res = CliRunner().invoke(app, [*args, "--out", str(out), "-j", "1"])
    assert res.exit_code == 0, res.output
    assert "NOT the sensitivity sweep" in res.output
    doc = json.loads((out / "sensitivity.json").read_text(encoding="utf-8"))
    assert doc["quick"] and doc["seeds"] == list(E.QUICK_SEEDS)
    assert list(doc["values"]) == ["handoff-ramp-length ×0.5", "handoff-ramp-length ×2", "epsilon 0.05", "epsilon 0.2"]  # fmt: skip
    cases = {s.id: s for s in C.specs()}
    ramp = {cid for cid, by in doc["claims"].items() if "handoff-ramp-length ×2" in by}
    assert ramp == {s.id for s in cases.values() if s.case in ("edar-handoff", "edar-motivation")}  # fmt: skip
    eps = {cid for cid, by in doc["claims"].items() if "epsilon 0.2" in by}
    assert eps == {s.id for s in cases.values() if "edar-o" in (s.a, s.b) and s.case != "edar-motivation"}  # fmt: skip
    r = json.loads((out / "sensitivity" / "epsilon" / "0.2" / "result.json").read_text(encoding="utf-8"))  # fmt: skip
    assert (r["adapt_steps"], r["adapt_args"]) == (40, {"epsilon": 0.2, "online_iterations": 2})
    assert (out / "sensitivity.md").read_text(encoding="utf-8") == "\n".join(S._markdown(doc)) + "\n"  # fmt: skip


def test_unknown_param_is_bad_input(tmp_path):
    from typer.testing import CliRunner

    from mpsched.cli import app
    from mpsched.cli.errors import EXIT_BAD_INPUT

    res = CliRunner().invoke(
        app, ["reproduce", "edar", "--sensitivity", "--params", "nope", "--out", str(tmp_path)]
    )
    assert res.exit_code == EXIT_BAD_INPUT
    assert "--params" in res.output and len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "sensitivity.md").exists()


# --- the committed sweep and the docs that quote it ----------------------------------------


def _committed_sweep():
    return json.loads((COMMITTED / "sensitivity.json").read_text(encoding="utf-8"))


def test_committed_sweep_is_the_full_seed_run():
    doc = _committed_sweep()
    assert doc["seeds"] == list(P.HELD_OUT) and not doc["quick"]
    claims, _ = P.load_committed(COMMITTED)
    assert doc["values"], "no value measured"
    for col, s in doc["values"].items():
        cells = {cid: by[col] for cid, by in doc["claims"].items() if col in by}
        assert len(cells) == s["claims"] > 0
        flips = [cid for cid, c in cells.items() if c[0] != claims[cid].verdict]
        assert sorted(flips) == sorted(s["flipped"]) and len(flips) == s["flips"]
    md = (COMMITTED / "sensitivity.md").read_text(encoding="utf-8")
    assert md == "\n".join(S._markdown(doc)) + "\n"


def test_committed_sweep_is_imported_not_rerun(tmp_path):
    """A call with the committed reference imports the committed values (nothing to run:
    ``params`` empty) and writes the committed tables back unchanged."""
    doc = _committed_sweep()
    cols = S.import_committed(tmp_path, P.HELD_OUT)
    assert cols == list(doc["values"])
    S.sensitivity(tmp_path, params=[], seeds=P.HELD_OUT)
    assert json.loads((tmp_path / "sensitivity.json").read_text(encoding="utf-8")) == doc
    assert S.import_committed(tmp_path, P.HELD_OUT) == []  # already there
    assert S.import_committed(tmp_path / "q", E.QUICK_SEEDS) == []


def test_docs_quote_the_committed_sweep():
    """docs/edar.md's "Sensitivity" section gives every measured value's flips and claims."""
    text = (ROOT / "docs" / "edar.md").read_text(encoding="utf-8")
    section = text.split("### Sensitivity", 1)[1].split("\n### ", 1)[0]
    for s in _committed_sweep()["values"].values():
        assert f"| {s['param']} | {s['value']} | {s['flips']} of {s['claims']} |" in section, s
    for p in S.PARAMS:
        assert f"`{p.name}`" in section, p.name
