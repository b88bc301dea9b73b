//! The emulated network, sans-IO: the scenario's links (built by `mpsched_sim::netmodel`, the
//! simulator's own model), routed hop by hop over each path's forward (client → server) and
//! reverse links, with the scenario's scheduled link changes and path outages. Packets and
//! `now` go in ([`EmuNet::offer`]); deliveries with the time the model says they leave the last
//! link come out ([`EmuNet::advance`]). The model runs on the scheduled (virtual) times of its
//! own events, so a late wake-up of the real-time loop delays a delivery but never changes the
//! model's decisions or later departure times.

use mpsched_sim::event::{EventQueue, Kind};
use mpsched_sim::link::{Link, Offer, PktId};
use mpsched_sim::netmodel::{build_links, schedule_changes};
use mpsched_sim::scenario::{PathEvent, PathEventKind};
use mpsched_sim::Scenario;

/// A packet that left the last link of its route.
#[derive(Debug, PartialEq)]
pub struct Delivery<P> {
    /// Path index in the scenario.
    pub path: u16,
    /// Direction: client → server (forward links) or back (reverse links).
    pub to_server: bool,
    /// The packet.
    pub payload: P,
    /// When the model says it arrives (ns since the start).
    pub due_ns: u64,
}

struct Slot<P> {
    path: u16,
    to_server: bool,
    hop: u8,
    tag: u32,
    payload: Option<P>,
}

/// The tag of a packet whose drops are not counted per tag.
pub const NO_TAG: u32 = u32::MAX;

/// The scenario's links and paths with packets of type `P` in flight.
pub struct EmuNet<P> {
    links: Vec<Link>,
    ev: EventQueue,
    routes: Vec<(Vec<u32>, Vec<u32>)>,
    events: Vec<PathEvent>,
    slots: Vec<Slot<P>>,
    free: Vec<PktId>,
    scratch: Vec<PktId>,
    lost: Vec<(PktId, bool)>,
    /// Packets dropped by any link (queue, loss or outage).
    pub dropped: u64,
    /// Drops per packet tag (see [`EmuNet::offer`]), [`NO_TAG`] excluded.
    pub dropped_by_tag: std::collections::BTreeMap<u32, u64>,
}

impl<P: AsRef<[u8]>> EmuNet<P> {
    /// The network of `sc` at time 0 with its link changes and path events queued.
    pub fn new(sc: &Scenario) -> Self {
        let links = build_links(sc);
        let mut ev = EventQueue::default();
        schedule_changes(&links, &mut ev);
        for (i, e) in sc.events.iter().enumerate() {
            ev.push(e.at_ns, Kind::PathEvent, i as u32, 0);
        }
        let routes = sc.paths.iter().map(|p| (p.fwd.clone(), p.rev.clone())).collect();
        EmuNet {
            links,
            ev,
            routes,
            events: sc.events.clone(),
            slots: Vec::new(),
            free: Vec::new(),
            scratch: Vec::new(),
            lost: Vec::new(),
            dropped: 0,
            dropped_by_tag: Default::default(),
        }
    }

    /// The links, for their counters and capacity.
    pub fn links_mut(&mut self) -> &mut [Link] {
        &mut self.links
    }

    /// Time of the model's next event, if any.
    pub fn next_time(&self) -> Option<u64> {
        self.ev.peek_time()
    }

    /// A packet enters `path` in direction `to_server` at `now` (call [`EmuNet::advance`] up to
    /// `now` first); its drops are counted under `tag` (e.g. its flow) unless it is [`NO_TAG`].
    /// Returns false if the first link dropped it.
    pub fn offer(&mut self, now: u64, path: u16, to_server: bool, tag: u32, payload: P) -> bool {
        let slot = Slot { path, to_server, hop: 0, tag, payload: Some(payload) };
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = slot;
                id
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as PktId
            }
        };
        self.enter(now, id)
    }

    fn route(&self, id: PktId) -> &[u32] {
        let s = &self.slots[id as usize];
        let r = &self.routes[s.path as usize];
        if s.to_server {
            &r.0
        } else {
            &r.1
        }
    }

    /// Packet `id` enters the link of its current hop.
    fn enter(&mut self, now: u64, id: PktId) -> bool {
        let l = self.route(id)[self.slots[id as usize].hop as usize] as usize;
        let size = self.size_of(id);
        match self.links[l].offer(now, id, size, &mut self.ev) {
            Offer::Accepted => true,
            Offer::DroppedQueue | Offer::DroppedOutage => {
                self.drop_packet(id);
                false
            }
        }
    }

    fn size_of(&self, id: PktId) -> u32 {
        self.slots[id as usize].payload.as_ref().map_or(0, |p| p.as_ref().len() as u32)
    }

    /// Counts the drop of packet `id` and frees it.
    fn drop_packet(&mut self, id: PktId) {
        self.dropped += 1;
        let tag = self.slots[id as usize].tag;
        if tag != NO_TAG {
            *self.dropped_by_tag.entry(tag).or_default() += 1;
        }
        self.release(id);
    }

    fn release(&mut self, id: PktId) -> Option<P> {
        self.free.push(id);
        self.slots[id as usize].payload.take()
    }

    /// Runs every model event due by `now`, each at its own scheduled time; packets that leave
    /// their last link are appended to `out`.
    pub fn advance(&mut self, now: u64, out: &mut Vec<Delivery<P>>) {
        while self.ev.peek_time().is_some_and(|t| t <= now) {
            let e = self.ev.pop().expect("peeked");
            let l = e.a as usize;
            let mut moved = std::mem::take(&mut self.scratch);
            match e.kind {
                Kind::Lost => {
                    let mut lost = std::mem::take(&mut self.lost);
                    self.links[l].on_lost(e.at, e.b, &mut self.ev, &mut lost);
                    moved.extend(lost.drain(..).map(|(id, _)| id));
                    self.lost = lost;
                }
                Kind::TraceOpportunity => self.links[l].on_trace_opportunity(e.at, &mut self.ev, &mut moved),
                Kind::LinkChange => self.links[l].apply_change(e.at, e.b as usize, &mut moved, &mut self.ev),
                Kind::PathEvent => self.path_event(e.at, e.a as usize, &mut moved),
                Kind::Arrive if !self.links[l].live(e.b) => {}
                Kind::Arrive => {
                    self.links[l].on_arrive(e.at, &mut self.ev, &mut moved);
                    for &id in moved.iter() {
                        self.hop_done(e.at, id, out);
                    }
                    moved.clear();
                }
                _ => unreachable!("the network queues only link and path events"),
            }
            for &id in moved.iter() {
                self.drop_packet(id);
            }
            moved.clear();
            self.scratch = moved;
        }
    }

    /// Packet `id` left a link at `at`: on to the next link of its route, or delivered.
    fn hop_done(&mut self, at: u64, id: PktId, out: &mut Vec<Delivery<P>>) {
        self.slots[id as usize].hop += 1;
        if (self.slots[id as usize].hop as usize) < self.route(id).len() {
            self.enter(at, id);
            return;
        }
        let (path, to_server) = (self.slots[id as usize].path, self.slots[id as usize].to_server);
        let payload = self.release(id).expect("a packet in flight has its payload");
        out.push(Delivery { path, to_server, payload, due_ns: at });
    }

    /// A path down/up event: the path's links stop or resume carrying packets, as in the
    /// simulator (`Sim::path_event`). Backup/active events concern the endpoints only.
    fn path_event(&mut self, at: u64, i: usize, dropped: &mut Vec<PktId>) {
        let e = &self.events[i];
        let down = match e.kind {
            PathEventKind::Down => true,
            PathEventKind::Up => false,
            PathEventKind::Backup | PathEventKind::Active => return,
        };
        let (fwd, rev) = &self.routes[e.path as usize];
        for &l in fwd.iter().chain(rev) {
            self.links[l as usize].set_outage(at, down, dropped, &mut self.ev);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(text: &str) -> EmuNet<Vec<u8>> {
        EmuNet::new(&Scenario::from_toml(text, "t.toml").unwrap())
    }

    fn run_all(n: &mut EmuNet<Vec<u8>>) -> Vec<(u64, u16, bool, usize)> {
        let mut out = Vec::new();
        n.advance(u64::MAX, &mut out);
        out.into_iter().map(|d| (d.due_ns, d.path, d.to_server, d.payload.len())).collect()
    }

    const ONE: &str = "[sim]\nduration_s = 1\n[[paths]]\nname = \"p\"\nrate_mbps = 12\ndelay_ms = 10\n\
                       [[flows]]\nname = \"f\"\npath = \"p\"\n";

    #[test]
    fn serialization_then_propagation_per_packet() {
        // 12 Mbit/s: 1 ms per 1500-byte packet, then 10 ms of propagation.
        let mut n = net(ONE);
        for _ in 0..3 {
            assert!(n.offer(0, 0, true, NO_TAG, vec![0; 1500]));
        }
        assert!(n.offer(0, 0, false, NO_TAG, vec![0; 52]));
        let got = run_all(&mut n);
        let ack = 10_000_000 + (52u64 * 8 * 1000).div_ceil(12);
        assert_eq!(
            got,
            vec![
                (ack, 0, false, 52),
                (11_000_000, 0, true, 1500),
                (12_000_000, 0, true, 1500),
                (13_000_000, 0, true, 1500)
            ]
        );
    }

    #[test]
    fn jitter_is_the_simulators_draw_on_the_data_direction() {
        // `jitter_ms` (mpsched_sim::link::Jitter): the forward link's delay is 10 ms + (r mod
        // 10 ms) − 5 ms, r from its `link/p.fwd/jitter` stream of the scenario's seed (1); the
        // ACK direction has none.
        let mut n = net(&ONE.replace("delay_ms = 10", "delay_ms = 10\njitter_ms = 5"));
        assert!(n.offer(0, 0, true, NO_TAG, vec![0; 1500]));
        assert!(n.offer(0, 0, false, NO_TAG, vec![0; 52]));
        let r = mpsched_sim::rng::Rng::stream(1, "link/p.fwd/jitter").next_u64() % 10_000_000;
        let ack = 10_000_000 + (52u64 * 8 * 1000).div_ceil(12);
        let mut got = run_all(&mut n);
        got.sort();
        let mut want = vec![(ack, 0, false, 52), (6_000_000 + r, 0, true, 1500)];
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn advance_stops_at_now_and_resumes_at_the_scheduled_times() {
        let mut n = net(ONE);
        n.offer(0, 0, true, NO_TAG, vec![0; 1500]);
        n.offer(0, 0, true, NO_TAG, vec![0; 1500]);
        let mut out = Vec::new();
        n.advance(11_500_000, &mut out);
        assert_eq!(out.len(), 1);
        // A late call (5 ms after) still delivers at the model's time.
        n.advance(17_000_000, &mut out);
        assert_eq!(out.iter().map(|d| d.due_ns).collect::<Vec<_>>(), vec![11_000_000, 12_000_000]);
    }

    #[test]
    fn shared_link_serializes_both_paths_and_outage_drops() {
        let text = r#"
[sim]
duration_s = 1
[[links]]
name = "a"
rate_mbps = 1000
delay_ms = 1
[[links]]
name = "shared"
rate_mbps = 12
delay_ms = 5
[[links]]
name = "b"
rate_mbps = 1000
delay_ms = 1
[[links]]
name = "back"
rate_mbps = 1000
delay_ms = 1
[[paths]]
name = "p0"
forward = ["a", "shared"]
reverse = ["back"]
[[paths]]
name = "p1"
forward = ["b", "shared"]
reverse = ["back"]
[[events]]
at_s = 0.5
path = "p1"
state = "down"
[[flows]]
name = "f"
paths = ["p0", "p1"]
"#;
        let mut n = net(text);
        n.offer(0, 0, true, NO_TAG, vec![0; 1500]);
        n.offer(0, 1, true, NO_TAG, vec![0; 1500]);
        let got = run_all(&mut n);
        // Both reach "shared" at 1.012 ms; the second waits 1 ms for the first.
        assert_eq!(got, vec![(7_012_000, 0, true, 1500), (8_012_000, 1, true, 1500)]);
        n.advance(500_000_000, &mut Vec::new());
        assert!(!n.offer(500_000_000, 1, true, 7, vec![0; 1500]), "p1 is down");
        assert!(n.offer(500_000_000, 0, true, 7, vec![0; 1500]));
        assert!(!n.offer(500_000_000, 1, true, NO_TAG, vec![0; 1500]));
        assert_eq!(n.dropped, 2);
        assert_eq!(n.dropped_by_tag.into_iter().collect::<Vec<_>>(), vec![(7, 1)]);
    }
}
