//! The observation's feature layout, defined once: one enum per feature group (subflow,
//! connection, flow), each feature with its name, kind, unit and meaning. The recorder
//! ([`super::Env`]) writes the features in enum order, [`ObsLayout`] derives every offset from
//! the enums' lengths, and the Python env and docs/envs.md read the same table
//! (`mpsched._core.obs_features`, [`markdown_table`]).

/// What values a feature takes (all are stored as `f32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureKind {
    /// A real number.
    Float,
    /// A whole number (a flag or a discrete action), stored exactly.
    Int,
}

impl FeatureKind {
    /// `"float"` or `"int"`.
    pub const fn name(self) -> &'static str {
        match self {
            FeatureKind::Float => "float",
            FeatureKind::Int => "int",
        }
    }
}

/// Who can compute a feature: what a policy deployed in a real sender may read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeenBy {
    /// The sending connection's own state and counters (and the agent's own actions).
    Sender,
    /// The receiver only (its buffer, what it delivered to its application).
    Receiver,
    /// A model the simulator runs (the device's energy).
    Model,
}

impl SeenBy {
    /// `"sender"`, `"receiver"` or `"model"`.
    pub const fn name(self) -> &'static str {
        match self {
            SeenBy::Sender => "sender",
            SeenBy::Receiver => "receiver",
            SeenBy::Model => "model",
        }
    }
}

/// Description of one feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureInfo {
    /// Name, as in `feature_names` and the docs.
    pub name: &'static str,
    /// Float or integer values.
    pub kind: FeatureKind,
    /// Unit of the stored value (`"1"`: a plain number or a fraction).
    pub unit: &'static str,
    /// Who can compute it.
    pub seen_by: SeenBy,
    /// What the feature is.
    pub doc: &'static str,
}

/// A group of features: an enum whose variants, in order, are the group's slots in a frame.
pub trait Feature: Copy + 'static {
    /// Every feature of the group, in frame order.
    const ALL: &'static [Self];
    /// Name of the group (`"subflow"`, `"connection"`, `"flow"`).
    const GROUP: &'static str;
    /// The feature's description.
    fn info(self) -> FeatureInfo;
    /// Position of the feature in its group's slot.
    fn index(self) -> usize;
}

/// Defines a feature enum, its [`Feature`] impl and a `NAMES` array.
macro_rules! features {
    ($(#[$m:meta])* $vis:vis enum $enum:ident: $group:literal, $names:ident {
        $($var:ident => ($name:literal, $kind:ident, $unit:literal, $seen:ident, $doc:literal),)*
    }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $enum {
            $(#[doc = $doc] $var,)*
        }

        impl $enum {
            /// Every feature, in frame order.
            pub const ALL: [$enum; [$($enum::$var),*].len()] = [$($enum::$var),*];
            /// Number of features of the group.
            pub const COUNT: usize = Self::ALL.len();

            /// The feature's description.
            pub const fn info(self) -> FeatureInfo {
                match self {
                    $($enum::$var => FeatureInfo {
                        name: $name, kind: FeatureKind::$kind, unit: $unit, seen_by: SeenBy::$seen, doc: $doc,
                    },)*
                }
            }
        }

        impl Feature for $enum {
            const ALL: &'static [Self] = &$enum::ALL;
            const GROUP: &'static str = $group;
            fn info(self) -> FeatureInfo {
                $enum::info(self)
            }
            fn index(self) -> usize {
                self as usize
            }
        }

        #[doc = concat!("Names of the ", $group, " features, in frame order.")]
        pub const $names: [&str; $enum::COUNT] = [$($name),*];
    };
}

features! {
    /// Per-subflow features of a frame (`max_paths` slots; zeros for absent subflows).
    pub enum SubflowFeature: "subflow", SUBFLOW_FEATURES {
        Srtt => ("srtt", Float, "100 ms", Sender, "smoothed RTT (RFC 6298)"),
        Rttvar => ("rttvar", Float, "100 ms", Sender, "RTT variation (RFC 6298)"),
        Rto => ("rto", Float, "100 ms", Sender, "retransmission timeout (RFC 6298)"),
        Cwnd => ("cwnd", Float, "100 segments", Sender, "congestion window"),
        Inflight => ("inflight", Float, "100 segments", Sender, "bytes in flight (pipe)"),
        DeliveryRate => ("delivery_rate", Float, "10 Mbit/s", Sender, "latest delivery-rate sample"),
        Throughput => ("throughput", Float, "10 Mbit/s", Sender, "payload sent in the interval, retransmissions included"),
        Goodput => ("goodput", Float, "10 Mbit/s", Sender, "payload acknowledged on the subflow in the interval"),
        Loss => ("loss", Float, "1", Sender, "segments detected lost / segments sent in the interval"),
        FreeBw => ("free_bw", Float, "10 Mbit/s", Sender, "max delivery rate over the history minus throughput (>= 0)"),
        PrevShare => ("prev_share", Float, "1", Sender, "the previous action's share or selection of this subflow"),
        EnergyJ => ("energy_j", Float, "J", Model, "device energy charged to the subflow in the interval: its byte share of its interface's active, promotion and tail energy (0 without an energy model)"),
        PowerW => ("power_w", Float, "W", Model, "energy_j / interval"),
        Jitter => ("jitter", Float, "100 ms", Sender, "absolute change of the smoothed RTT since the previous interval"),
    }
}

features! {
    /// Connection features of a frame.
    pub enum ConnFeature: "connection", CONN_FEATURES {
        RcvWindow => ("rcv_window", Float, "receive buffer", Sender, "peer's advertised window (largest over subflows) / receive buffer"),
        Inflight => ("inflight", Float, "receive buffer", Sender, "bytes in flight over all subflows / receive buffer"),
        Ooo => ("ooo", Float, "receive buffer", Receiver, "mean out-of-order bytes at the receiver in the interval / buffer (EdAR O/B)"),
        BufferFull => ("buffer_full", Float, "1", Receiver, "share of the interval the receive buffer was full (EdAR F/TI)"),
        Goodput => ("goodput", Float, "10 Mbit/s", Receiver, "bytes delivered to the receiving application in the interval"),
        SendBlocked => ("send_blocked", Float, "1", Sender, "share of the interval the sender was blocked by the peer's window"),
        PrevMode => ("prev_mode", Int, "1", Sender, "previous action of a mode env: 0 normal, 1 redundant"),
        Interval => ("interval", Float, "100 ms", Sender, "length of the interval"),
    }
}

features! {
    /// Per-flow features of a congestion-control frame (DRL-CC's b, g, d, v, w per flow;
    /// `max_flows` slots).
    pub enum FlowFeature: "flow", FLOW_FEATURES {
        SendRate => ("send_rate", Float, "10 Mbit/s", Sender, "payload sent over all subflows in the interval"),
        Goodput => ("goodput", Float, "10 Mbit/s", Receiver, "bytes delivered to the application in the interval"),
        Srtt => ("srtt", Float, "100 ms", Sender, "mean smoothed RTT over established subflows"),
        Rttvar => ("rttvar", Float, "100 ms", Sender, "mean RTT variation over established subflows"),
        Cwnd => ("cwnd", Float, "100 segments", Sender, "sum of the congestion windows"),
        Target => ("target", Int, "1", Sender, "1 when the action applies to this flow (the controlled flow; host env: the flows the next action sets), else 0"),
        Multipath => ("multipath", Int, "1", Sender, "1 for a multipath (MPTCP) flow, 0 for single-path TCP"),
        Subflows => ("subflows", Int, "1", Sender, "open subflows (established, not closed)"),
    }
}

/// Where everything sits in a flat observation: `history` frames, oldest first, then the mask.
/// A frame holds `max_paths` slots of [`SubflowFeature`], the [`ConnFeature`]s and `max_flows`
/// slots of [`FlowFeature`] (0 slots except in congestion-control envs). The mask is 1 per
/// usable subflow slot, then 1 per active flow slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObsLayout {
    /// Subflow slots per frame.
    pub max_paths: usize,
    /// Frames per observation.
    pub history: usize,
    /// Flow slots per frame (0 unless the env has the host view).
    pub max_flows: usize,
}

impl ObsLayout {
    /// Offset of the subflow slots in a frame.
    pub const fn subflow_offset(&self) -> usize {
        0
    }

    /// Offset of subflow slot `i` in a frame.
    pub const fn subflow_slot(&self, i: usize) -> usize {
        self.subflow_offset() + i * SubflowFeature::COUNT
    }

    /// Offset of feature `f` of subflow slot `i` in a frame.
    pub const fn subflow(&self, i: usize, f: SubflowFeature) -> usize {
        self.subflow_slot(i) + f as usize
    }

    /// Offset of the connection features in a frame.
    pub const fn conn_offset(&self) -> usize {
        self.subflow_offset() + self.max_paths * SubflowFeature::COUNT
    }

    /// Offset of connection feature `f` in a frame.
    pub const fn conn(&self, f: ConnFeature) -> usize {
        self.conn_offset() + f as usize
    }

    /// Offset of the flow slots in a frame.
    pub const fn flow_offset(&self) -> usize {
        self.conn_offset() + ConnFeature::COUNT
    }

    /// Offset of flow slot `j` in a frame.
    pub const fn flow_slot(&self, j: usize) -> usize {
        self.flow_offset() + j * FlowFeature::COUNT
    }

    /// Offset of feature `f` of flow slot `j` in a frame.
    pub const fn flow(&self, j: usize, f: FlowFeature) -> usize {
        self.flow_slot(j) + f as usize
    }

    /// Length of one frame.
    pub const fn frame_len(&self) -> usize {
        self.flow_offset() + self.max_flows * FlowFeature::COUNT
    }

    /// Offset of frame `h` (0 = oldest) in the observation.
    pub const fn frame(&self, h: usize) -> usize {
        h * self.frame_len()
    }

    /// Offset of the path mask in the observation.
    pub const fn path_mask_offset(&self) -> usize {
        self.history * self.frame_len()
    }

    /// Offset of the flow mask in the observation.
    pub const fn flow_mask_offset(&self) -> usize {
        self.path_mask_offset() + self.max_paths
    }

    /// Length of the mask at the end of the observation.
    pub const fn mask_len(&self) -> usize {
        self.max_paths + self.max_flows
    }

    /// Length of the observation.
    pub const fn size(&self) -> usize {
        self.path_mask_offset() + self.mask_len()
    }

    /// Every offset and length by name (exported to Python, which slices observations with
    /// them instead of computing them again).
    pub fn offsets(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("max_paths", self.max_paths),
            ("history", self.history),
            ("max_flows", self.max_flows),
            ("subflow_offset", self.subflow_offset()),
            ("subflow_stride", SubflowFeature::COUNT),
            ("conn_offset", self.conn_offset()),
            ("conn_len", ConnFeature::COUNT),
            ("flow_offset", self.flow_offset()),
            ("flow_stride", FlowFeature::COUNT),
            ("frame_len", self.frame_len()),
            ("path_mask_offset", self.path_mask_offset()),
            ("flow_mask_offset", self.flow_mask_offset()),
            ("mask_len", self.mask_len()),
            ("size", self.size()),
        ]
    }
}

/// Every feature group's descriptions, in frame order: (group name, features).
pub fn feature_groups() -> Vec<(&'static str, Vec<FeatureInfo>)> {
    fn group<F: Feature>() -> (&'static str, Vec<FeatureInfo>) {
        (F::GROUP, F::ALL.iter().map(|f| f.info()).collect())
    }
    vec![group::<SubflowFeature>(), group::<ConnFeature>(), group::<FlowFeature>()]
}

/// The observation feature table of docs/envs.md (between its `obs-features` markers).
pub fn markdown_table() -> String {
    let mut s =
        String::from("| group | index | feature | kind | unit | seen by | meaning |\n|---|---|---|---|---|---|---|\n");
    for (group, feats) in feature_groups() {
        for (i, f) in feats.iter().enumerate() {
            let (name, kind, unit, who) = (f.name, f.kind.name(), f.unit, f.seen_by.name());
            s += &format!("| {group} | {i} | `{name}` | {kind} | {unit} | {who} | {} |\n", f.doc);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<F: Feature + PartialEq + std::fmt::Debug>(names: &[&str]) {
        for (i, &f) in F::ALL.iter().enumerate() {
            assert_eq!(f.index(), i, "{f:?}");
            assert_eq!(f.info().name, names[i]);
        }
        assert_eq!(F::ALL.len(), names.len());
        let mut sorted = names.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "duplicate feature name in {}", F::GROUP);
    }

    #[test]
    fn indices_and_names_follow_the_enums() {
        check::<SubflowFeature>(&SUBFLOW_FEATURES);
        check::<ConnFeature>(&CONN_FEATURES);
        check::<FlowFeature>(&FLOW_FEATURES);
    }

    #[test]
    fn offsets_follow_the_group_lengths() {
        let l = ObsLayout { max_paths: 3, history: 2, max_flows: 4 };
        assert_eq!(l.subflow(2, SubflowFeature::Jitter), 3 * 14 - 1);
        assert_eq!(l.conn(ConnFeature::RcvWindow), 42);
        assert_eq!(l.flow(0, FlowFeature::SendRate), 50);
        assert_eq!(l.frame_len(), 42 + 8 + 32);
        assert_eq!(l.path_mask_offset(), 2 * 82);
        assert_eq!(l.flow_mask_offset(), 167);
        assert_eq!(l.size(), 164 + 7);
    }

    /// docs/envs.md's feature table is generated from the enums (`MPSCHED_BLESS=1` rewrites it).
    #[test]
    fn docs_table_matches_the_enums() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/envs.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let (begin, end) = ("<!-- obs-features:begin -->\n", "<!-- obs-features:end -->");
        let a = doc.find(begin).expect("begin marker in docs/envs.md") + begin.len();
        let b = doc.find(end).expect("end marker in docs/envs.md");
        let table = markdown_table();
        if std::env::var_os("MPSCHED_BLESS").is_some() {
            std::fs::write(path, format!("{}{table}{}", &doc[..a], &doc[b..])).unwrap();
            return;
        }
        assert_eq!(&doc[a..b], table, "docs/envs.md feature table is stale: rerun with MPSCHED_BLESS=1");
    }
}
