"""Type stub of ``mpsched._core``, the compiled simulator core (crates/mpsched-py/src/*.rs).

Every function and class the Rust module exports, with the argument names, defaults and
return types of its ``#[pyfunction]`` / ``#[pymethods]`` signatures. Results are plain
dicts of lists (columns) as ``output_to_dict`` builds them (lib.rs).
"""

from typing import Any, Callable, Dict, List, Literal, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

class ScenarioError(ValueError):
    """A bad scenario, trace or argument (one-line message)."""

#: ``{"summary": str (JSON), "resolved": str (TOML), "flows" | "subflows" | "timeseries" |
#: "links" | "queues": {column: list}, "schemas": {table: {column: type name}}}``; a scenario
#: with ``[[udp]]`` flows adds "udp_flows" (and "probes", with a probe flow) tables.
RunOutput = Dict[str, Any]

def run_scenario(
    text: str,
    source: str,
    fmt: str = "toml",
    seed: Optional[int] = None,
    on_chunk: Optional[
        Callable[[Dict[str, List[Any]], Dict[str, str], float, float, int], None]
    ] = None,
    chunk_rows: int = 65536,
) -> RunOutput:
    """Runs a scenario given as TOML (or JSON) text; returns summary, resolved scenario and
    tables. ``source`` names the scenario in errors and anchors relative trace paths.

    With ``on_chunk``, the timeseries comes in pieces as the run goes:
    ``on_chunk(rows, types, now_s, end_s, events)`` gets the rows sampled since the last call
    (at most about ``chunk_rows``, or every 0.2 s of wall time), their Arrow type names, the
    simulated time, the scenario's duration and the events so far; the returned timeseries
    holds only the rows after the last call. The run is the same either way."""

def check_syntax(text: str, source: str, fmt: str = "toml") -> None:
    """Checks the TOML (or JSON) syntax of ``text`` only; raises ScenarioError (one line, with
    the line number) if it is malformed or nested too deeply."""

def policy_digest(name: str) -> Optional[str]:
    """The SHA-256 of the policy a scheduler name loads (``edar``, ``edar:PATH``,
    ``policy:PATH``), or None for a name that is not a policy; raises ScenarioError for a bad
    policy file."""

def policy_prefixes() -> List[str]:
    """The prefixes of scheduler names that load a policy file (``edar``, ``policy``)."""

class Sim:
    """A simulation driven step by step: run to the next decision point, look, decide."""

    def __init__(
        self, text: str, source: str, fmt: str = "toml", seed: Optional[int] = None
    ) -> None: ...
    def advance(
        self, until_s: Optional[float] = None
    ) -> Tuple[Literal["decision", "interval", "deadline", "finished"], Optional[int]]:
        """Simulates until ``until_s`` (default: the end) or the next decision point. A failed
        Python scheduler raises :class:`SchedulerError`."""
    def decide_mode(self, flow: int, mode: int) -> None:
        """Per-interval mode of an ``external-mode`` flow: 0 normal (minRTT), 1 redundant."""
    def decide_weights(self, flow: int, weights: List[float]) -> None:
        """Per-interval shares of new data per subflow of an ``external-weights`` flow."""
    def decide_path(self, flow: int, subflow: Optional[int] = None) -> None:
        """Per-packet answer of an ``external-packet`` flow (None: minRTT's choice)."""
    def set_cwnd(self, flow: int, subflow: int, cwnd_bytes: int) -> None:
        """Sets a subflow's congestion window in bytes (flows with ``cc = "external"``)."""
    @property
    def now_s(self) -> float:
        """Simulated time in seconds."""
    @property
    def flow_names(self) -> List[str]:
        """Flow names, by index."""
    def state(self, flow: int) -> Dict[str, Any]:
        """``{"conn": {...}, "subflows": [{...}, ...]}`` of a flow now."""
    def output(self) -> RunOutput:
        """Results so far, as :func:`run_scenario` returns them."""

class Net:
    """A generic exported network (``mpsched.policies.export``), evaluated in Rust."""

    def __init__(self, path: str) -> None: ...
    def forward(self, obs: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The head's output ``[B, output_len]`` for observations ``[B, input_len]``."""
    @property
    def input_len(self) -> int: ...
    @property
    def output_len(self) -> int: ...

class Policy:
    """Any policy file as the runtime runs it (a scheduler's or a host's): ``act`` gives its
    network's action vectors for observations of its own layout."""

    def __init__(self, path: str) -> None: ...
    def act(self, obs: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Action vectors ``[B, action_len]`` for observations ``[B, obs_len]``."""
    @property
    def obs_len(self) -> int: ...
    @property
    def action_len(self) -> int: ...
    @property
    def sha256(self) -> str: ...

class EdarNet:
    """A loaded EdAR Q-network (checks the description and every tensor shape)."""

    def __init__(self, path: str) -> None: ...
    def q_values(
        self, obs: npt.NDArray[np.float32], max_paths: int
    ) -> Tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """Q-values ``[B, 2]`` and the connection-start flags ``[B]`` of observations ``[B, D]``."""
    @property
    def history(self) -> int: ...
    @property
    def variant(self) -> str: ...

class Env:
    """One learning environment over an env spec (scenario text, controlled flow, action kind,
    sizes; see ``mpsched.envs._spec``), or a host env for a spec with ``"kind": "host"``
    (``mpsched.envs.host``)."""

    def __init__(self, spec_json: str, seed: int) -> None: ...
    def output(self) -> Dict[str, Any]:
        """The episode's results so far, as ``run_scenario`` returns them."""
    def reset(self, seed: int, obs: npt.NDArray[np.float32]) -> None:
        """Starts an episode whose scenario is drawn with ``seed``; writes the first observation."""
    def step(
        self,
        action: npt.NDArray[np.float32],
        obs: npt.NDArray[np.float32],
        terms: npt.NDArray[np.float64],
    ) -> Tuple[bool, bool]:
        """Applies ``action``, runs to the next decision boundary, writes the observation and
        the interval's reward terms. Returns (terminated, truncated)."""
    @property
    def obs_len(self) -> int: ...
    @property
    def action_len(self) -> int: ...
    @property
    def terms_len(self) -> int: ...
    @property
    def frame_len(self) -> int: ...
    @property
    def mask_len(self) -> int: ...
    @property
    def term_names(self) -> List[str]: ...
    @property
    def now_s(self) -> float:
        """Simulated time in seconds."""
    @property
    def steps(self) -> int:
        """Steps taken in this episode."""
    @property
    def subflows(self) -> int:
        """Subflows the controlled connection has now (0 for a host env)."""
    def slot_flows(self) -> List[Optional[str]]:
        """Host env: the flow in each slot (None: free); flow env: empty."""

class VecEnv:
    """``n`` envs, sub-env i seeded ``base_seed + i``, stepped on ``threads`` threads."""

    def __init__(self, spec_json: str, n: int, base_seed: int, threads: int) -> None: ...
    def reset(self, base_seed: Optional[int], obs: npt.NDArray[np.float32]) -> None:
        """Resets every sub-env (``base_seed`` None: each one's next episode); writes ``obs`` [n, D]."""
    def step(
        self,
        actions: npt.NDArray[np.float32],
        obs: npt.NDArray[np.float32],
        terms: npt.NDArray[np.float64],
        terminated: npt.NDArray[np.bool_],
        truncated: npt.NDArray[np.bool_],
    ) -> None:
        """Steps every sub-env (next-step autoreset); writes obs [n, D], terms [n, T], flags [n]."""
    def reset_ended(self, obs: npt.NDArray[np.float32]) -> None:
        """Starts the next episode of the sub-envs whose episode just ended; writes their rows
        of ``obs`` [n, D] (same-step autoreset)."""
    @property
    def num_envs(self) -> int: ...
    @property
    def threads(self) -> int: ...
    @property
    def obs_len(self) -> int: ...
    @property
    def action_len(self) -> int: ...
    @property
    def terms_len(self) -> int: ...
    @property
    def term_names(self) -> List[str]: ...

def obs_features() -> List[Tuple[str, List[Tuple[str, str, str, str, str]]]]:
    """The observation's feature groups in frame order: (group, [(name, kind, unit, seen_by, doc)])."""

def obs_layout(max_paths: int, history: int, max_flows: int) -> List[Tuple[str, int]]:
    """Every offset and length of an observation, by name."""

def pdaa3c_inputs(
    obs: npt.NDArray[np.float32],
    max_paths: int,
    history: int,
    gamma: float = 0.7,
    eta: float = 0.3,
    alpha: float = 1000.0,
) -> Tuple[
    npt.NDArray[np.float32], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]
]:
    """PDAA3C's actor inputs ranked by subflow quality Q (eqs. 4-5), rank -> slot (-1 past the
    usable subflows), usable counts and Q per slot (bytes/s) of scheduler observations."""

def host_layout(max_flows: int, max_subflows: int, history: int) -> List[Tuple[str, int]]:
    """Every offset and length of a host env's observation, by name."""

def bench_names() -> List[str]:
    """Names of the built-in benchmark scenarios."""

def bench_description(name: str) -> str:
    """Description of a built-in benchmark scenario."""

def bench(name: str, repeats: int = 1) -> Dict[str, Union[str, int, float]]:
    """Times one benchmark scenario (fastest of ``repeats`` runs)."""

def bench_decisions(repeats: int = 3) -> Dict[str, Union[int, float]]:
    """Cost of pausing at per-packet decision points (EdAR scenario, against the built-in
    equivalent, same process)."""

def algorithm_label(kind: str, text: str) -> str:
    """The label of ``name`` or ``name:key=value,...`` for ``kind`` ("scheduler" or "cc");
    raises ScenarioError with the one-line reason for a bad name or parameter."""
    ...

def algorithms(kind: str) -> List[Dict[str, Any]]:
    """Every registered algorithm of ``kind`` ("scheduler" or "cc"): ``name``, ``aliases``
    (``(alias, preset parameters)`` pairs), ``doc`` and ``params`` (dicts with ``name``,
    ``type``, ``default``, ``range``, ``doc``)."""
    ...

def integer_fields() -> List[str]:
    """Scenario fields that hold integers (a random or swept value for them is rounded)."""
    ...

def version() -> str:
    """Version of the compiled core."""

def synth_trace(
    mean_mbps: float,
    duration_s: Optional[float] = None,
    seed: int = 1,
    variability: Optional[float] = None,
    dwell_s: Optional[float] = None,
    outage_per_min: Optional[float] = None,
    outage_s: Optional[float] = None,
) -> str:
    """The mahimahi text of a synthetic trace. Raises ScenarioError ``"<field>: <expected>"``."""

class SchedulerError(RuntimeError):
    """A Python scheduler failed during a run (its exception is the cause)."""

class SubflowView:
    """One subflow as a scheduler sees it (Rust ``SchedSubflow`` with its ``SubflowInfo``
    flattened). Durations in ms (exactly ``ns / 1e6``), byte counts as integers."""

    @property
    def index(self) -> int:
        """Position in the connection's subflow list (what ``get_send`` returns)."""
    @property
    def usable(self) -> bool:
        """Not definitely unavailable: established, joined, not potentially failed, path up."""
    @property
    def available(self) -> bool:
        """Usable and has congestion-window space for the segment (``mptcp_is_available``)."""
    @property
    def backup(self) -> bool:
        """Flagged backup (MP_PRIO): used only when no active subflow is usable."""
    @property
    def space(self) -> int:
        """Free congestion window in bytes."""
    @property
    def carried(self) -> bool:
        """The segment being scheduled was already sent on this subflow (reinjections)."""
    @property
    def queued(self) -> int:
        """Bytes sent on this subflow and not yet acknowledged on it."""
    @property
    def min_srtt_ms(self) -> float:
        """Running minimum of srtt in ms (0 before a sample)."""
    @property
    def max_srtt_ms(self) -> float:
        """Running maximum of srtt in ms."""
    @property
    def established(self) -> bool:
        """Handshake (or join) completed and this end has not sent its FIN."""
    @property
    def state(self) -> str:
        """TCP state (RFC 9293 3.3.2): ``"established"``, ``"syn_sent"``, ..."""
    @property
    def srtt_ms(self) -> float:
        """Smoothed RTT in ms (RFC 6298), 0 before the first sample."""
    @property
    def rttvar_ms(self) -> float:
        """RTT variation in ms (RFC 6298)."""
    @property
    def min_rtt_ms(self) -> float:
        """Smallest RTT sample in ms, 0 before the first."""
    @property
    def rto_ms(self) -> float:
        """Current retransmission timeout in ms, backoff included."""
    @property
    def cwnd(self) -> int:
        """Congestion window in bytes."""
    @property
    def ssthresh(self) -> Optional[int]:
        """Slow-start threshold in bytes (None until the first loss)."""
    @property
    def pipe(self) -> int:
        """Bytes in flight (RFC 6675 pipe)."""
    @property
    def outstanding(self) -> int:
        """Bytes sent and not cumulatively acknowledged."""
    @property
    def delivered(self) -> int:
        """Bytes acknowledged (cumulatively or by SACK) over the subflow's life."""
    @property
    def bytes_sent(self) -> int:
        """Payload bytes sent, retransmissions included."""
    @property
    def bytes_retransmitted(self) -> int:
        """Payload bytes retransmitted."""
    @property
    def segments_sent(self) -> int:
        """Data segments sent, retransmissions included."""
    @property
    def segments_retransmitted(self) -> int:
        """Data segments retransmitted."""
    @property
    def segments_lost(self) -> int:
        """Segments detected lost."""
    @property
    def rto_count(self) -> int:
        """Retransmission timeouts fired."""
    @property
    def fast_recoveries(self) -> int:
        """Fast-recovery episodes entered (RFC 6675)."""
    @property
    def delivery_rate(self) -> int:
        """Latest delivery-rate sample, bytes per second."""
    @property
    def in_recovery(self) -> bool:
        """In fast recovery or RTO recovery now."""
    @property
    def peer_wnd(self) -> int:
        """Peer's advertised receive window in bytes."""
    @property
    def bytes_received(self) -> int:
        """Payload bytes received in order on this subflow."""

class SchedView:
    """Everything a scheduler may look at when one segment waits (Rust ``SchedView``)."""

    @property
    def subflows(self) -> Tuple[SubflowView, ...]:
        """Every subflow, in subflow order."""
    @property
    def now_s(self) -> float:
        """Simulated time in seconds."""
    @property
    def seg_len(self) -> int:
        """Length of the segment to schedule, bytes."""
    @property
    def reinjection(self) -> bool:
        """The segment is a reinjection (already sent on another subflow; see ``carried``)."""
    @property
    def unsent(self) -> int:
        """Connection-level bytes in the send buffer not yet handed to any subflow."""
    @property
    def send_window(self) -> int:
        """Connection-level send window left: peer's window right edge − next DSN to send."""
    @property
    def conn(self) -> Dict[str, Union[int, float]]:
        """The connection's counters (Rust ``ConnInfo``), a dict built on each access."""
    def min_rtt(self) -> Optional[int]:
        """minRTT's choice (Linux ``get_available_subflow``), or None: wait."""
    def fastest(self) -> Optional[int]:
        """The usable active subflow with the smallest srtt, window space or not."""

def register_scheduler(
    name: str,
    make: Callable[[], Any],
    redundant: bool = False,
    opportunistic_retransmission: bool = False,
    penalize_all_carriers: bool = False,
) -> None:
    """Registers a Python scheduler as ``name``: ``make()`` returns one scheduler object per
    connection, with ``get_send(view)`` and optionally ``get_retrans(view)``, ``seed(seed)``
    and ``on_hol_event()``. A built-in's name or alias raises ValueError."""

def unregister_scheduler(name: str) -> bool:
    """Removes the Python scheduler ``name``; False if there was none."""

def scheduler_plugins() -> List[str]:
    """The names of the registered plug-in schedulers, sorted."""
