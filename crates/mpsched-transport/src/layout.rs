//! In-memory sizes of the per-connection state (`std::mem::size_of`), which the benchmarks print:
//! with many connections the simulator is memory-bound (issue 22), so what every connection,
//! subflow and in-flight segment occupies is a figure to track.

/// `(type, bytes)` for the structures a connection keeps per connection, per subflow and per
/// segment. Heap parts (the subflows' `Vec`, boxed side state, queues) are not included: the
/// figure is the inline size of each value.
pub fn sizes() -> Vec<(&'static str, usize)> {
    use std::mem::size_of;
    vec![
        ("Connection", size_of::<crate::Connection>()),
        ("Subflow", size_of::<crate::subflow::Subflow>()),
        ("Segment", size_of::<crate::Segment>()),
        ("SentSeg (scoreboard entry)", size_of::<crate::subflow::scoreboard::SentSeg>()),
        ("Scoreboard", size_of::<crate::subflow::scoreboard::Scoreboard>()),
        ("AnyCc", size_of::<crate::AnyCc>()),
        ("AnySched", size_of::<crate::AnySched>()),
        ("SubflowInfo", size_of::<crate::SubflowInfo>()),
        ("ConnInfo", size_of::<crate::ConnInfo>()),
        ("SubflowConfig", size_of::<crate::SubflowConfig>()),
    ]
}

#[cfg(test)]
mod tests {
    /// Every entry names a type that takes space (the list is printed as is by the benchmarks).
    #[test]
    fn sizes_are_listed() {
        let s = super::sizes();
        assert_eq!(s.len(), 10);
        assert!(s.iter().all(|&(_, n)| n > 0));
        eprintln!("{s:#?}");
    }
}
