//! Reward terms of an interval (see `mpsched.rewards`), in the order the env writes them.
//! After the [`Term`]s come per-subflow and per-flow columns: `sub_tput_mbps_<i>` for
//! i < max_paths (receiver-side throughput of subflow i, EdAR's Y_i, PDAA3C's TT_i), then
//! `flow_goodput_mbps_<j>` and `flow_active_<j>` for j < max_flows.

/// Defines a term enum and its names from one list: the enum's discriminant is the column.
macro_rules! terms {
    ($(#[$m:meta])* $enum:ident, $names:ident { $($var:ident => ($name:literal, $doc:literal),)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $enum {
            $(#[doc = $doc] $var,)*
        }

        #[doc = concat!("Names of the [`", stringify!($enum), "`]s, in column order.")]
        pub const $names: [&str; [$($name),*].len()] = [$($name),*];
    };
}
pub(crate) use terms;

terms! {
    /// One reward term of a flow env; its discriminant is its column.
    Term, TERMS {
    IntervalS => ("interval_s", "real length of the interval (rates use at least the nominal length)"),
    GoodputMbps => ("goodput_mbps", "G: bytes delivered in order to the receiving application"),
    RecvTputMbps => ("recv_tput_mbps", "ΣY: bytes received on all subflows (duplicates included)"),
    SendTputMbps => ("send_tput_mbps", "bytes sent on all subflows (retransmissions and copies included)"),
    OooBytes => ("ooo_bytes", "O: mean out-of-order bytes in the receive buffer"),
    BufferBytes => ("buffer_bytes", "B: receive buffer size"),
    BufferFullS => ("buffer_full_s", "F: time the receive buffer was full"),
    RedundantMbps => ("redundant_mbps", "redundant copies sent"),
    EnergyJ => ("energy_j", "E: device energy charged to the flow's subflows (active, promotion and tail; env::energy)"),
    PowerW => ("power_w", "E / interval"),
    DelayMs => ("delay_ms", "D: mean smoothed RTT over established subflows"),
    JitterMs => ("jitter_ms", "J: mean |Δ srtt| over established subflows since the last interval"),
    CapacityMbps => ("capacity_mbps", "sum of the nominal rates of the flow's paths (bottleneck link each)"),
    Done => ("done", "1 when the controlled flow completed in this interval"),
    Subflows => ("subflows", "subflows of the controlled connection"),
}}
