"""mpsched.run and Results: inputs, summary structure, table columns and types."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

import mpsched
from mpsched.results import table_from_columns

REPO = Path(__file__).resolve().parents[2]

FLOW_COLUMNS = [
    "name",
    "bytes_delivered",
    "goodput_mbps",
    "fct_s",
    "retransmits",
    "losses",
    "completed",
]
LINK_COLUMNS = [
    "name",
    "packets_sent",
    "packets_dropped_queue",
    "packets_dropped_loss",
    "bytes_delivered",
    "utilization",
]
TIMESERIES_COLUMNS = [
    "time_s",
    "flow",
    "subflow",
    "cwnd_bytes",
    "ssthresh_bytes",
    "srtt_ms",
    "rttvar_ms",
    "rto_ms",
    "inflight_bytes",
    "throughput_mbps",
    "goodput_mbps",
    "flow_goodput_mbps",
    "losses",
    "retransmits",
]


def assert_in_order(columns: list, expected: list) -> None:
    """``expected`` are all in ``columns``, in the same relative order."""
    present = [c for c in columns if c in expected]
    assert present == expected, f"columns {columns} lack or reorder {expected}"


def test_dict_and_path_give_the_same_results(fast_dict, fast_toml):
    from_dict = mpsched.run(fast_dict)
    from_path = mpsched.run(fast_toml)
    assert from_dict.summary == from_path.summary
    for name in ("flows", "subflows", "timeseries", "links"):
        assert from_dict.tables[name].equals(from_path.tables[name]), name


def test_str_path_and_json_file_are_accepted(fast_dict, fast_toml, tmp_path):
    json_path = tmp_path / "fast.json"
    json_path.write_text(json.dumps(fast_dict))
    expected = mpsched.run(fast_toml).summary
    assert mpsched.run(str(fast_toml)).summary == expected
    assert mpsched.run(json_path).summary == expected


def test_summary_structure(fast_dict):
    summary = mpsched.run(fast_dict).summary
    for key in ("scenario", "seed", "duration_s", "profile", "flows", "links", "stats"):
        assert key in summary, key
    assert summary["scenario"] == "fast"
    assert summary["seed"] == 1
    assert summary["duration_s"] == pytest.approx(3.0)
    assert summary["profile"] == "linux"
    assert [f["name"] for f in summary["flows"]] == ["bulk", "sized"]
    for flow in summary["flows"]:
        assert set(FLOW_COLUMNS) <= set(flow), flow
        assert flow["bytes_delivered"] > 0
    for link in summary["links"]:
        assert set(LINK_COLUMNS) <= set(link), link
    assert {"events", "packets", "sim_seconds"} <= set(summary["stats"])


def test_seed_argument_overrides_the_scenario_seed(fast_dict):
    assert mpsched.run(fast_dict, seed=7).summary["seed"] == 7


def test_tables_have_the_documented_columns_and_types(fast_dict):
    res = mpsched.run(fast_dict)
    assert set(FLOW_COLUMNS) <= set(res.flows.column_names)
    assert set(LINK_COLUMNS) <= set(res.links.column_names)
    assert_in_order(res.timeseries.column_names, TIMESERIES_COLUMNS)

    assert res.flows.num_rows == 2
    assert res.flows.column("name").to_pylist() == ["bulk", "sized"]
    assert res.links.num_rows == len(res.summary["links"])
    assert res.timeseries.num_rows > 0

    ts = res.timeseries.schema
    assert ts.field("time_s").type == pa.float64()
    assert ts.field("flow").type == pa.string()
    assert ts.field("subflow").type == pa.int64()
    assert ts.field("srtt_ms").type == pa.float64()
    assert res.flows.schema.field("goodput_mbps").type == pa.float64()
    assert res.flows.schema.field("bytes_delivered").type == pa.int64()
    assert res.links.schema.field("utilization").type == pa.float64()


def test_all_null_columns_keep_their_type(fast_dict):
    """A bulk-only run has no sizes and no FCTs: the columns stay int64 / float64."""
    fast_dict["flows"] = [{"name": "bulk", "path": "p"}]
    fast_dict["sim"]["duration_s"] = 0.05  # ssthresh still unset (null) at the first sample
    res = mpsched.run(fast_dict)
    assert res.flows.column("size_bytes").null_count == 1
    assert res.flows.schema.field("size_bytes").type == pa.int64()
    assert res.flows.schema.field("fct_s").type == pa.float64()
    assert res.timeseries.schema.field("ssthresh_bytes").type == pa.int64()


def test_to_pandas_returns_one_dataframe_per_table(fast_dict):
    res = mpsched.run(fast_dict)
    frames = res.to_pandas()
    assert list(frames) == ["flows", "subflows", "timeseries", "links", "queues"]
    assert list(frames["queues"].columns) == ["time_s", "link", "queue_bytes", "queue_packets"]
    # One row per sample and link: the path p is two links, p.fwd and p.rev.
    assert set(frames["queues"]["link"]) == {"p.fwd", "p.rev"}
    for name, frame in frames.items():
        assert list(frame.columns) == res.tables[name].column_names
        assert len(frame) == res.tables[name].num_rows


def test_invalid_dict_raises_a_one_line_scenario_error(fast_dict):
    fast_dict["sim"]["bogus"] = 1
    with pytest.raises(mpsched.ScenarioError) as info:
        mpsched.run(fast_dict)
    message = str(info.value)
    assert message.startswith("<dict>: ")
    assert "\n" not in message
    assert isinstance(info.value, ValueError)


def test_invalid_file_error_names_the_file(tmp_path):
    path = tmp_path / "neg.toml"
    path.write_text('[sim]\nduration_s = 1.0\n[[paths]]\nname = "p"\nrate_mbps = -5.0\n')
    with pytest.raises(mpsched.ScenarioError, match=r"^.*neg\.toml: "):
        mpsched.run(path)


def test_bad_arguments_are_rejected(fast_dict, tmp_path):
    with pytest.raises(TypeError):
        mpsched.run(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        mpsched.run(fast_dict, seed=-1)
    with pytest.raises(ValueError):
        mpsched.run(fast_dict, seed=2**63)
    with pytest.raises(FileNotFoundError):
        mpsched.run(tmp_path / "missing.toml")


# The examples run in full; the scenario library (the papers' settings, long runs and sweeps)
# is smoke-tested with short runs in test_scenarios.py.
EXAMPLES = ("demo.toml", "single-newreno.toml", "edar-handoff.toml")


@pytest.mark.parametrize(
    "path", [REPO / "scenarios" / name for name in EXAMPLES], ids=lambda p: p.name
)
def test_shipped_scenarios_run(path: Path):
    res = mpsched.run(path)
    assert res.summary["flows"], "a shipped scenario should have flows"
    for flow in res.summary["flows"]:
        assert flow["bytes_delivered"] > 0, flow["name"]
        if flow["completed"]:
            assert flow["fct_s"] is not None


def test_demo_transfer_completes():
    """The demo's header promises an FCT for its 5 MB transfer."""
    flows = {f["name"]: f for f in mpsched.run(REPO / "scenarios" / "demo.toml").summary["flows"]}
    assert flows["transfer"]["completed"]
    assert flows["transfer"]["bytes_delivered"] == 5_000_000
    assert 0 < flows["transfer"]["fct_s"] < 30


def test_table_from_columns_types_and_order():
    table = table_from_columns(
        {
            "z_int": [1, 2],
            "a_float": [1.5, None],
            "mixed": [1, 2.5],
            "text": ["x", "y"],
            "flag": [True, False],
            "size_bytes": [None, None],
        },
        schema={"size_bytes": "int64"},
    )
    assert table.column_names == ["z_int", "a_float", "mixed", "text", "flag", "size_bytes"]
    assert [f.type for f in table.schema] == [
        pa.int64(),
        pa.float64(),
        pa.float64(),
        pa.string(),
        pa.bool_(),
        pa.int64(),
    ]
    assert table.column("a_float").null_count == 1


def test_table_from_columns_rejects_ragged_or_odd_columns():
    with pytest.raises(ValueError):
        table_from_columns({"a": [1, 2], "b": [1]})
    with pytest.raises(TypeError):
        table_from_columns({"a": [1, "x"]})


def test_documented_complete_example_runs(tmp_path):
    """The complete example in docs/scenarios.md is a valid scenario."""
    doc = (REPO / "docs" / "scenarios.md").read_text()
    section = doc.split("## Complete example", 1)[1]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.toml"
    path.write_text(example)
    res = mpsched.run(path)
    assert res.summary["scenario"] == "example"
    assert [f["name"] for f in res.summary["flows"]] == ["video", "download"]
