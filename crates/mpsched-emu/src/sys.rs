//! The few system calls the emulator needs, through `libc`: TUN devices (Linux
//! `Documentation/networking/tuntap.rst`), entering a named network namespace (`setns(2)` on
//! `/run/netns/NAME`, what `ip netns exec` does), signals and a monotonic clock.

use std::ffi::CString;
use std::io::{Error, Result};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// `TUNSETIFF` = `_IOW('T', 202, int)` (include/uapi/linux/if_tun.h).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// A layer-3 device: packets are bare IP datagrams.
const IFF_TUN: libc::c_short = 0x0001;
/// No 4-byte packet-information header in front of each packet.
const IFF_NO_PI: libc::c_short = 0x1000;

fn check(r: libc::c_int) -> Result<libc::c_int> {
    if r < 0 {
        Err(Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Opens a non-blocking TUN device named `name` in the calling thread's network namespace.
///
/// Without `IFF_VNET_HDR` the device cannot take GSO packets: the kernel advertises no TSO/GSO
/// features for it (`tun_set_iff` only adds `TUN_USER_FEATURES` after `TUNSETOFFLOAD`, which
/// needs the virtio-net header), so `validate_xmit_skb` segments every packet to the MTU before
/// `tun_net_xmit`; and without `IFF_NAPI` a written packet goes up through `netif_rx`, not GRO.
pub fn open_tun(name: &str) -> Result<OwnedFd> {
    let path = CString::new("/dev/net/tun").unwrap();
    // SAFETY: a valid C string; the returned descriptor is owned below.
    let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) })?;
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut ifr = [0u8; 40];
    let n = name.len().min(libc::IFNAMSIZ - 1);
    ifr[..n].copy_from_slice(&name.as_bytes()[..n]);
    ifr[16..18].copy_from_slice(&(IFF_TUN | IFF_NO_PI).to_ne_bytes());
    // SAFETY: `ifr` is a 40-byte `struct ifreq` (name, then the flags in the union).
    check(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, ifr.as_mut_ptr()) })?;
    Ok(fd)
}

fn open_ro(path: &str) -> Result<OwnedFd> {
    let c = CString::new(path).unwrap();
    // SAFETY: a valid C string; the descriptor is owned below.
    let fd = check(unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) })?;
    // SAFETY: just opened.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Runs `f` with the calling thread inside the named network namespace, then moves back.
pub fn in_netns<T>(name: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let home = open_ro("/proc/thread-self/ns/net")?;
    let target = open_ro(&format!("/run/netns/{name}"))
        .map_err(|e| Error::new(e.kind(), format!("network namespace {name}: {e}")))?;
    // SAFETY: both descriptors are namespace files.
    check(unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) })?;
    let r = f();
    // SAFETY: as above.
    check(unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) })?;
    r
}

/// Set by SIGINT/SIGTERM: the run loop stops and writes its counters.
pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the SIGINT/SIGTERM handlers (no `SA_RESTART`: `ppoll` returns `EINTR`).
pub fn install_signal_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a handler that only stores an atomic.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Asks for precise wake-ups: 1 ns timer slack (`PR_SET_TIMERSLACK`) and, where allowed,
/// `SCHED_FIFO` priority `prio`. Returns whether the real-time policy was applied.
pub fn realtime(prio: i32) -> bool {
    // SAFETY: plain process attribute calls.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
        if prio <= 0 {
            return false;
        }
        let p = libc::sched_param { sched_priority: prio };
        libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0
    }
}

/// Waits until one of `fds` is readable or `timeout_ns` passed (`None`: no timeout).
/// Returns the poll entries' `revents`; an interrupted wait returns all zero.
pub fn wait(fds: &mut [libc::pollfd], timeout_ns: Option<u64>) -> Result<()> {
    let ts = timeout_ns
        .map(|t| libc::timespec { tv_sec: (t / 1_000_000_000) as libc::time_t, tv_nsec: (t % 1_000_000_000) as _ });
    let tp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `fds` is a valid slice of pollfd; `tp` is null or points to a live timespec.
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, tp, std::ptr::null()) };
    if r < 0 {
        let e = Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINTR) {
            fds.iter_mut().for_each(|p| p.revents = 0);
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

/// Reads one packet; `Ok(None)` when none is waiting.
pub fn read_packet(fd: libc::c_int, buf: &mut [u8]) -> Result<Option<usize>> {
    // SAFETY: `buf` is a valid writable buffer of its length.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(None),
            _ => Err(e),
        };
    }
    Ok(Some(n as usize))
}

/// Writes one packet into the kernel through a TUN device.
pub fn write_packet(fd: libc::c_int, pkt: &[u8]) -> Result<()> {
    // SAFETY: `pkt` is a valid readable buffer of its length.
    let n = unsafe { libc::write(fd, pkt.as_ptr().cast(), pkt.len()) };
    if n < 0 {
        return Err(Error::last_os_error());
    }
    Ok(())
}
