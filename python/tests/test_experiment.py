"""`mpsched.compare`: the Python API of `mpsched compare` (same dataset, DataFrames, errors)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

import pandas as pd
import pytest
from conftest import FAST_DICT

import mpsched
from mpsched.matrix import MatrixError
from mpsched.sweep import BackendError, OutputDirError


def tree_bytes(root: Path) -> Dict[str, bytes]:
    """Every file under ``root`` (relative path -> bytes)."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def two_by_two(tmp_path_factory):
    """The mini scenario × (minrtt, redundant) × seeds 1-2, through the API with `out=`."""
    from conftest import MINI_TOML

    root = tmp_path_factory.mktemp("api")
    scenario = root / "mini.toml"
    scenario.write_text(MINI_TOML)
    out = root / "api"
    cmp = mpsched.compare(
        scenario, schedulers=["minrtt", "redundant"], seeds=[1, 2], jobs=1, out=out
    )
    return scenario, out, cmp


def test_out_is_byte_identical_to_the_command_line(two_by_two, cli, tmp_path):
    scenario, out, _ = two_by_two
    proc = cli(
        "compare", str(scenario), "--scheduler", "minrtt,redundant", "--seeds", "1-2",
        "-j", "1", "--out", str(tmp_path / "cli"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    api_files = {k: v for k, v in tree_bytes(out).items() if k != ".lock"}
    cli_files = {k: v for k, v in tree_bytes(tmp_path / "cli").items() if k != ".lock"}
    assert sorted(api_files) == sorted(cli_files)
    assert "flows.parquet" in api_files and "runs/redundant_seed2/summary.json" in api_files
    for name in api_files:
        assert api_files[name] == cli_files[name], name


def test_tables_are_the_datasets_with_a_variant_column(two_by_two):
    _, out, cmp = two_by_two
    assert cmp.out_dir == out
    assert cmp.variants == ("minrtt", "redundant") and cmp.seeds == (1, 2)
    for name in ("flows", "subflows", "timeseries", "links"):
        frame = getattr(cmp, name)
        on_disk = pd.read_parquet(out / f"{name}.parquet")
        assert list(frame.columns[:6]) == ["run_id", "scheduler", "cc", "params", "seed", "variant"]
        pd.testing.assert_frame_equal(frame.drop(columns="variant"), on_disk)
        assert (frame["variant"] == frame["scheduler"]).all()
    assert cmp.flows["run_id"].nunique() == 4
    assert cmp.sweep.ran == 4 and cmp.sweep.reused == 0


def test_summary_has_one_row_per_variant_and_flow(two_by_two):
    _, _, cmp = two_by_two
    s = cmp.summary
    assert list(zip(s["variant"], s["flow"])) == [
        ("minrtt", "mp"), ("minrtt", "tcp"), ("redundant", "mp"), ("redundant", "tcp"),
    ]  # fmt: skip
    assert (s["runs"] == 2).all()
    mp = cmp.flows[(cmp.flows["variant"] == "redundant") & (cmp.flows["name"] == "mp")]
    row = s[(s["variant"] == "redundant") & (s["flow"] == "mp")].iloc[0]
    assert row["goodput_mbps"] == pytest.approx(mp["goodput_mbps"].mean())
    assert row["goodput_ci_mbps"] > 0


def test_without_out_nothing_stays_on_disk_and_tables_match(two_by_two, tmp_path, monkeypatch):
    scenario, _, with_out = two_by_two
    monkeypatch.chdir(tmp_path)
    cmp = mpsched.compare(str(scenario), schedulers="minrtt,redundant", seeds="1-2", jobs=1)
    assert cmp.out_dir is None and list(tmp_path.iterdir()) == []
    for name in ("flows", "subflows", "timeseries", "links", "summary"):
        pd.testing.assert_frame_equal(getattr(cmp, name), getattr(with_out, name))


def test_scenario_seed_and_range_seeds(mini_toml):
    cmp = mpsched.compare(mini_toml, seeds=range(5, 7), jobs=1)
    assert cmp.seeds == (5, 6) and cmp.variants == ("minrtt",)
    assert mpsched.compare(mini_toml, jobs=1).seeds == (1,)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"seeds": "3-1"}, "seeds: range '3-1' goes down (write '1-3')"),
        ({"seeds": [1, 1]}, "seeds: seed 1 is given twice"),
        ({"seeds": [-1]}, "seeds: expected integers in [0, 2**63 - 1], got -1"),
        ({"seeds": [True]}, "seeds: expected integers in [0, 2**63 - 1], got True"),
        ({"seeds": []}, "seeds: expected at least one seed, got none"),
        ({"seeds": 1.5}, "seeds: expected an integer, a string like '1-10' or a list of integers"),
        ({"schedulers": []}, "schedulers: expected at least one name, got an empty list"),
        ({"schedulers": ["minrtt", "minrtt"]}, "schedulers: 'minrtt' is given twice"),
        ({"schedulers": "a b"}, "schedulers: 'a b' is not a valid name"),
        ({"schedulers": 3}, "schedulers: expected a name, a comma-separated string"),
        ({"ccs": "lia,,olia"}, "ccs: empty name in 'lia,,olia'"),
        ({"jobs": 0}, "jobs: expected an integer >= 1, got 0"),
    ],
)
def test_bad_arguments_raise_one_line_matrix_errors(mini_toml, kwargs, message):
    with pytest.raises(MatrixError) as err:
        mpsched.compare(mini_toml, **kwargs)
    text = str(err.value)
    assert text.startswith(message) and "\n" not in text, text


def test_bad_scenarios_raise_one_line_errors(fast_toml, tmp_path):
    with pytest.raises(MatrixError, match=r"^schedulers: .*fast.toml has no multipath flow"):
        mpsched.compare(fast_toml, schedulers="minrtt")
    with pytest.raises(
        MatrixError, match=r"^scenario: expected the path of a scenario file, got dict"
    ):
        mpsched.compare(FAST_DICT)
    with pytest.raises(mpsched.ScenarioError, match="missing.toml"):
        mpsched.compare(tmp_path / "missing.toml")
    with pytest.raises(MatrixError, match="nosuch"):
        mpsched.compare(fast_toml, ccs="nosuch")
    with pytest.raises(BackendError, match=r"^backend: expected one of local, ray, got 'nope'$"):
        mpsched.compare(fast_toml, backend="nope")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    with pytest.raises(OutputDirError, match="is not a `mpsched compare` output directory"):
        mpsched.compare(fast_toml, out=tmp_path / "taken")


def test_several_scenarios_make_one_dataset_with_a_scenario_column(mini_toml, fast_toml, tmp_path):
    out = tmp_path / "both"
    cmp = mpsched.compare(
        [mini_toml, fast_toml], ccs=["cubic", "newreno"], seeds=1, jobs=1, out=out
    )
    assert (out / "compare.json").is_file() and not (out / "mini").exists()
    assert sorted(p.name for p in (out / "runs").iterdir()) == [
        "fast_cubic_seed1", "fast_newreno_seed1", "mini_cubic_seed1", "mini_newreno_seed1",
    ]  # fmt: skip
    on_disk = pd.read_parquet(out / "flows.parquet")
    assert list(on_disk.columns[:6]) == ["run_id", "scheduler", "cc", "params", "seed", "scenario"]
    assert list(cmp.flows.columns[:7]) == [
        "run_id", "scheduler", "cc", "params", "seed", "variant", "scenario",
    ]  # fmt: skip
    assert cmp.flows.groupby("scenario", sort=False)["run_id"].nunique().to_dict() == {
        "mini": 2,
        "fast": 2,
    }
    mini = mpsched.compare(mini_toml, ccs=["cubic", "newreno"], seeds=1, jobs=1)
    ours = cmp.flows[cmp.flows["scenario"] == "mini"].drop(columns=["scenario", "run_id"])
    pd.testing.assert_frame_equal(
        ours.reset_index(drop=True), mini.flows.drop(columns="run_id").reset_index(drop=True)
    )
    assert cmp.dataset.variants == ("cubic", "newreno")
    assert cmp.dataset.scenarios == ("mini", "fast")
    assert list(dict.fromkeys(cmp.summary["scenario"])) == ["mini", "fast"]
    assert (
        len(cmp.summary)
        == len(mini.summary) + 2 * cmp.flows[cmp.flows["scenario"] == "fast"]["name"].nunique()
    )
    assert cmp.sweep.ran == 4
    again = mpsched.compare([mini_toml, fast_toml], ccs=["cubic", "newreno"], seeds=1, out=out)
    assert (again.sweep.ran, again.sweep.reused) == (0, 4)
    with pytest.raises(MatrixError, match="is given twice"):
        mpsched.compare([mini_toml, mini_toml])
    with pytest.raises(MatrixError, match="non-empty list"):
        mpsched.compare([])


def test_scenario_labels_are_stems_made_unique(tmp_path):
    from mpsched.multi import scenario_labels

    a, b = tmp_path / "a" / "cell.toml", tmp_path / "b" / "cell.toml"
    assert scenario_labels([a, b, tmp_path / "wifi.toml"]) == ["a-cell", "b-cell", "wifi"]
    same = [tmp_path / "x" / "c.toml", tmp_path / "y" / "x" / "c.toml"]
    assert scenario_labels(same) == ["x-c-1", "x-c-2"]
    assert scenario_labels([tmp_path / "a b.json"]) == ["a-b"]


def test_plot_draws_the_chosen_variants(two_by_two, tmp_path):
    _, _, cmp = two_by_two
    written = cmp.plot(tmp_path / "plots", formats=["svg"], variants=["redundant"], smooth_s=0.4)
    names = sorted(p.name for p in written)
    assert "goodput_flows.svg" in names and "fct_bars.svg" in names
    assert all(p.suffix == ".svg" for p in written)
    svg = (tmp_path / "plots" / "goodput_flows.svg").read_text()
    assert "0.4 s moving average" in svg  # the title, kept as a comment beside its glyphs
    with pytest.raises(ValueError, match="--variants: no variant 'nope'"):
        cmp.plot(tmp_path / "other", variants=["nope"])
