//! Control what can be controlled: pin the measuring thread to one CPU and give every
//! allocation the same page size; record what cannot be controlled (load, steal time,
//! governor). The system calls go through `nix`'s safe wrappers; each one that fails falls
//! back to "not done, recorded".
//!
//! Huge pages: transparent huge pages make a filter's lookups cheaper or dearer depending on
//! whether its allocation happened to land on 2 MiB pages. The harness turns them off for
//! its own process (`prctl(PR_SET_THP_DISABLE)`), so every filter, ours and peers, is on 4 KiB
//! pages whatever the system setting; the setting and the outcome are recorded.
//!
//! The other way to make page sizes equal — every filter on 2 MiB pages through a global
//! allocator that maps large allocations with `MADV_HUGEPAGE` — was tried and not kept: the
//! ratios moved between runs as much as on 4 KiB pages or more (`docs/design/harness.md`).
//! What moves the figures between runs (see `driver`, *CPUs*) is not the page size.

use serde::{Deserialize, Serialize};

/// Measurement conditions: controlled (pinning, huge pages) and recorded (load, steal).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    /// The CPU the measuring thread was pinned to, if pinning worked.
    pub pinned_cpu: Option<usize>,
    /// The CPUs the lookup rounds moved across, in blocks of rounds (empty or one: they
    /// stayed on `pinned_cpu`; see `driver`'s *CPUs*).
    #[serde(default)]
    pub round_cpus: Vec<usize>,
    /// Transparent huge pages: the system setting and what this process did about it.
    pub thp: String,
    /// CPU frequency governor, if readable.
    pub governor: String,
    /// 1-minute load average at the start and at the end of the run.
    pub load_start: Option<f64>,
    /// See `load_start`.
    pub load_end: Option<f64>,
    /// Steal time over the run as a percentage of all CPU time, if readable.
    pub steal_pct: Option<f64>,
    /// The clock every ns/op and build time is read from.
    pub clock: String,
    /// Percentage of timed lookup chunks during which the thread was never switched out
    /// (only those count; see `Built::time_pass`).
    pub clean_chunks_pct: Option<f64>,
    /// Percentage of warm-up-and-pass attempts redone because the thread was switched out
    /// during them (another process had the core and its caches).
    #[serde(default)]
    pub redone_passes_pct: Option<f64>,
    /// Timed passes kept although switched out, after `driver::MAX_TRIES` attempts.
    #[serde(default)]
    pub unclean_passes: Option<u64>,
}

/// Pin the calling thread to the CPU it is running on; returns that CPU.
pub fn pin_current_thread() -> Option<usize> {
    let cpu = current_cpu()?;
    pin_to(cpu).then_some(cpu)
}

/// The CPU the calling thread is running on, if the OS says.
pub fn current_cpu() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        nix::sched::sched_getcpu().ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Pin the calling thread to `cpu` (the kernel moves it there before returning); `true` if
/// the kernel accepted it.
pub fn pin_to(cpu: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        use nix::sched::{CpuSet, sched_setaffinity};
        // `set` refuses a CPU beyond the set's capacity; pid 0 means the calling thread.
        let mut set = CpuSet::new();
        set.set(cpu).is_ok() && sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        false
    }
}

/// The CPUs the calling thread may run on, ascending (empty if the OS does not say).
pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        use nix::sched::{CpuSet, sched_getaffinity};
        match sched_getaffinity(nix::unistd::Pid::from_raw(0)) {
            Ok(set) => (0..CpuSet::count())
                .filter(|&c| set.is_set(c).unwrap_or(false))
                .collect(),
            Err(_) => Vec::new(),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
}

/// At most this many CPUs share the lookup rounds (see `driver`'s *CPUs*): every vCPU of the
/// two-core machines the harness is meant for, and on a larger machine few enough that each
/// CPU still runs a few rounds of each build (31 rounds in blocks of 2–5 rounds; the driver
/// uses no more CPUs than there are whole blocks).
pub const MAX_ROUND_CPUS: usize = 4;

/// Let the calling thread run on every CPU the process may use again (undoing
/// [`pin_current_thread`] for a thread that inherited the pin, e.g. one spawned to measure
/// multi-threaded work); `true` if the kernel accepted it.
pub fn unpin_current_thread() -> bool {
    #[cfg(target_os = "linux")]
    {
        use nix::sched::{CpuSet, sched_setaffinity};
        // Every CPU the set can name; the kernel keeps only those the process is allowed.
        let mut set = CpuSet::new();
        for cpu in 0..CpuSet::count() {
            if set.set(cpu).is_err() {
                return false;
            }
        }
        sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Turn transparent huge pages off for this process; `true` if the kernel accepted it.
pub fn disable_thp() -> bool {
    #[cfg(target_os = "linux")]
    {
        nix::sys::prctl::set_thp_disable(true).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// A clock of the CPU time this thread has run: time spent descheduled (another process on
/// the core, which on a shared 2-core machine is most of the noise) does not count, while
/// memory stalls do. Falls back to the wall clock where the OS has no per-thread clock.
#[derive(Clone, Copy, Debug)]
pub struct ThreadClock {
    start_ns: Option<u64>,
    wall: std::time::Instant,
}

/// CPU nanoseconds of the calling thread.
pub fn thread_cpu_ns() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        use nix::time::{ClockId, clock_gettime};
        let ts = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
        Some(ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

impl ThreadClock {
    /// Start timing.
    #[inline]
    pub fn start() -> Self {
        ThreadClock {
            start_ns: thread_cpu_ns(),
            wall: std::time::Instant::now(),
        }
    }

    /// Time since [`start`](Self::start): thread CPU time, or wall time as the fallback.
    #[inline]
    pub fn elapsed(&self) -> std::time::Duration {
        match (self.start_ns, thread_cpu_ns()) {
            (Some(a), Some(b)) => std::time::Duration::from_nanos(b.saturating_sub(a)),
            _ => self.wall.elapsed(),
        }
    }

    /// Which clock is in use (for the results).
    pub fn name() -> &'static str {
        if thread_cpu_ns().is_some() {
            "thread CPU time (CLOCK_THREAD_CPUTIME_ID): time descheduled does not count"
        } else {
            "wall clock (no per-thread CPU clock on this OS)"
        }
    }
}

/// Context switches (voluntary + involuntary) of the calling thread so far.
pub fn context_switches() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::resource::{UsageWho, getrusage};
        // RUSAGE_THREAD asks about the calling thread only.
        let u = getrusage(UsageWho::RUSAGE_THREAD).ok()?;
        Some((u.voluntary_context_switches() + u.involuntary_context_switches()) as u64)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// CPU time of the whole process, every thread (finished ones included), in ns: user +
/// system time from `/proc/self/stat`, in ticks of 1/100 s (Linux reports `/proc` times in
/// `USER_HZ` = 100), so ±10 ms — under 5 % of a 10^7-key build. 0 where there is no `/proc`.
pub fn process_cpu_ns() -> u64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0;
    };
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    f.iter().sum::<u64>() * 10_000_000
}

/// 1-minute load average.
pub fn load_average() -> Option<f64> {
    read("/proc/loadavg")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// (steal, total) jiffies of all CPUs from /proc/stat.
pub fn cpu_times() -> Option<(u64, u64)> {
    let stat = read("/proc/stat")?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let steal = *v.get(7)?;
    Some((steal, v.iter().take(8).sum()))
}

/// Conditions at the start of a run: pin, set the page policy, read the load.
#[derive(Debug)]
pub struct Session {
    conditions: Conditions,
    times: Option<(u64, u64)>,
}

impl Session {
    /// The CPUs the lookup rounds move across (at most [`MAX_ROUND_CPUS`], chosen when the
    /// session started; one or none means the rounds stay where the thread is pinned).
    pub fn round_cpus(&self) -> &[usize] {
        &self.conditions.round_cpus
    }

    /// Return the measuring thread to the CPU the session pinned it to (after rounds that
    /// moved it), so builds, floors and experiments run where they always did.
    pub fn return_home(&self) {
        if let Some(cpu) = self.conditions.pinned_cpu {
            pin_to(cpu);
        }
    }

    /// Pin the current thread and disable THP (both recorded); read the starting load.
    pub fn start() -> Self {
        let system = read("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_else(|| "unreadable".into());
        let thp = if disable_thp() {
            format!(
                "off for this process (prctl PR_SET_THP_DISABLE): every filter on 4 KiB pages; system setting: {system}"
            )
        } else {
            format!("could not be disabled; system setting: {system}")
        };
        // Before pinning, which narrows the thread's allowed set to one CPU.
        let allowed = allowed_cpus();
        let pinned_cpu = pin_current_thread();
        // The home CPU first, then the allowed ones after it, wrapping around.
        let round_cpus = match pinned_cpu {
            Some(home) => {
                let after = allowed.iter().position(|&c| c == home).map_or(0, |i| i + 1);
                let others = allowed.iter().cycle().skip(after).take(allowed.len());
                std::iter::once(home)
                    .chain(others.copied().filter(|&c| c != home))
                    .take(MAX_ROUND_CPUS)
                    .collect()
            }
            None => Vec::new(),
        };
        let conditions = Conditions {
            pinned_cpu,
            round_cpus,
            thp,
            governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
                .unwrap_or_else(|| "not exposed".into()),
            load_start: load_average(),
            load_end: None,
            steal_pct: None,
            clock: ThreadClock::name().into(),
            clean_chunks_pct: None,
            redone_passes_pct: None,
            unclean_passes: None,
        };
        Session {
            conditions,
            times: cpu_times(),
        }
    }

    /// The conditions, with the load and steal time at the end.
    pub fn finish(mut self) -> Conditions {
        self.conditions.load_end = load_average();
        if let (Some((s0, t0)), Some((s1, t1))) = (self.times, cpu_times())
            && t1 > t0
        {
            self.conditions.steal_pct = Some((s1 - s0) as f64 * 100.0 / (t1 - t0) as f64);
        }
        self.conditions
    }
}
