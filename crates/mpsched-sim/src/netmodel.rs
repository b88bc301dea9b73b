//! The scenario's links, built and scheduled one way for every engine that drives them: the
//! simulator (`Sim::new`) and the real-time emulator (`mpsched-emu`). A [`Link`] is sans-IO —
//! packets and `now` go in, its events (propagation done, a packet lost as it leaves the
//! serializer, trace opportunity) come out on an [`EventQueue`] — so both engines apply the
//! same model with the same loss streams and the same schedule of changes.

use crate::event::{EventQueue, Kind};
use crate::link::Link;
use crate::rng::Rng;
use crate::scenario::{PathEventKind, Scenario};

/// One [`Link`] per scenario link, in the scenario's order, each with its own loss stream
/// (`link/<name>/loss` of the scenario's seed) and, with a jitter, its own jitter stream
/// (`link/<name>/jitter`).
pub fn build_links(sc: &Scenario) -> Vec<Link> {
    let mut links: Vec<Link> = sc
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let rng = Rng::stream(sc.seed, &format!("link/{}/loss", l.name));
            let mut link = Link::new(
                i as u32,
                l.name.clone(),
                l.rate_bps,
                l.delay_ns,
                l.queue_bytes,
                l.loss.clone(),
                l.trace.clone(),
                rng,
                l.changes.clone(),
            );
            link.queue_cap_packets = l.queue_packets;
            if l.jitter_ns > 0 {
                // Its own stream, created only with jitter: the loss draws and every run without
                // jitter stay as they were.
                link.set_jitter(l.jitter_ns, Rng::stream(sc.seed, &format!("link/{}/jitter", l.name)));
            }
            link
        })
        .collect();
    announce_path_events(&mut links, sc);
    links
}

/// Announces the path events' outages to the links they take down or up
/// ([`Link::expect_change_at`]): a rate link decides departures early only where no change can
/// take them back without its undo (link/serial.rs).
fn announce_path_events(links: &mut [Link], sc: &Scenario) {
    for e in sc.events.iter().filter(|e| matches!(e.kind, PathEventKind::Down | PathEventKind::Up)) {
        let p = &sc.paths[e.path as usize];
        for &l in p.fwd.iter().chain(&p.rev) {
            links[l as usize].expect_change_at(e.at_ns);
        }
    }
}

/// Queues every link's scheduled changes (`Kind::LinkChange`, `a` = link, `b` = change index),
/// link by link in order: the simulator's first events.
pub fn schedule_changes(links: &[Link], ev: &mut EventQueue) {
    for (i, l) in links.iter().enumerate() {
        for (j, c) in l.changes.iter().enumerate() {
            ev.push(c.at_ns, Kind::LinkChange, i as u32, j as u32);
        }
    }
}
