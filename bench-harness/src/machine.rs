//! Describe the machine, toolchain and commit a run was taken on. Every probe falls back to
//! "unknown" rather than failing the run.

use std::process::Command;

use crate::schema::Machine;

fn cmd(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// The CPU's model name, with its family and model numbers and the widest vector extension
/// the filters use (the name a VM reports can be as bare as "AMD EPYC", which says nothing
/// of the core generation the figures depend on), e.g. "AMD EPYC, family 26 model 2, AVX2 +
/// AVX-512F".
fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == name)
            .map(|(_, v)| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let mut parts = vec![field("model name").unwrap_or_else(|| "unknown".into())];
    if let (Some(family), Some(model)) = (field("cpu family"), field("model")) {
        parts.push(format!("family {family} model {model}"));
    }
    #[cfg(target_arch = "x86_64")]
    parts.push(
        if std::arch::is_x86_feature_detected!("avx512f") {
            "AVX2 + AVX-512F"
        } else if std::arch::is_x86_feature_detected!("avx2") {
            "AVX2"
        } else {
            "no AVX2"
        }
        .to_string(),
    );
    parts.join(", ")
}

/// `32K`, `1024K`, `260M` → bytes.
fn size_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1024),
        'M' | 'm' => (&s[..s.len() - 1], 1024 * 1024),
        'G' | 'g' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok().map(|v| v * mult)
}

/// CPU 0's cache `index{i}` in sysfs: its `level`, `size` and `type` files, trimmed.
fn cache_index(i: u32) -> [Option<String>; 3] {
    let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
    ["level", "size", "type"].map(|f| {
        std::fs::read_to_string(format!("{dir}/{f}"))
            .ok()
            .map(|s| s.trim().to_string())
    })
}

/// L1d, L2 and last-level cache sizes in bytes, from sysfs (CPU 0).
pub fn cache_bytes() -> crate::schema::CacheBytes {
    let mut c = crate::schema::CacheBytes::default();
    let mut top = 0;
    for i in 0..8 {
        let [Some(level), Some(size), ty] = cache_index(i) else {
            continue;
        };
        let (Ok(level), Some(bytes)) = (level.parse::<u32>(), size_bytes(&size)) else {
            continue;
        };
        if ty.as_deref() == Some("Instruction") {
            continue;
        }
        match level {
            1 => c.l1d = Some(bytes),
            2 => c.l2 = Some(bytes),
            _ => {}
        }
        if level >= top {
            top = level;
            c.llc = Some(bytes);
        }
    }
    c
}

fn caches() -> String {
    let mut out = Vec::new();
    for i in 0..8 {
        let [Some(level), Some(size), ty] = cache_index(i) else {
            continue;
        };
        let ty = match ty.as_deref() {
            Some("Data") => "d",
            Some("Instruction") => "i",
            _ => "",
        };
        out.push(format!("L{level}{ty} {size}"));
    }
    if out.is_empty() {
        "unknown".into()
    } else {
        out.join(", ")
    }
}

/// The current UTC time as `YYYY-MM-DD HH:MM:SS UTC` (no date crate needed).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Probe the machine.
pub fn describe() -> Machine {
    // The commit of the harness's own sources (where it was built), else of the current dir.
    let src = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        let mut with_dir = vec!["-C", src];
        with_dir.extend_from_slice(args);
        cmd("git", &with_dir).or_else(|| cmd("git", args))
    };
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    // Dirty = a tracked source changed; the results a run (or an earlier run of `repeat`)
    // writes are not sources, so `results/` does not count.
    let dirty = git(&[
        "status",
        "--porcelain",
        "--untracked-files=no",
        "--",
        ":/",
        ":(exclude,top)results",
    ])
    .is_some();
    Machine {
        cpu: cpu_model(),
        cores: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        caches: caches(),
        cache_bytes: cache_bytes(),
        rustc: cmd("rustc", &["--version"]).unwrap_or_else(|| "unknown".into()),
        git_commit: if dirty && commit != "unknown" {
            format!("{commit}-dirty")
        } else {
            commit
        },
        date: utc_now(),
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        conditions: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cache_sizes_parse() {
        assert_eq!(super::size_bytes("32K"), Some(32 * 1024));
        assert_eq!(super::size_bytes("260M"), Some(260 << 20));
        assert_eq!(super::size_bytes("512"), Some(512));
        assert_eq!(super::size_bytes("x"), None);
    }
}
