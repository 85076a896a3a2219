//! What a run was measured on and with: GPU, driver, NVRTC, commit, date.

/// The current time as `2026-11-29T14:03:12Z`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    utc_from_unix(secs)
}

/// Seconds since 1970 as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC).
pub fn utc_from_unix(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The NVIDIA kernel module's version (`580.159.04`) from the text of `/proc/driver/nvidia/version`.
pub fn parse_driver_release(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    first
        .split_whitespace()
        .find(|t| {
            let parts: Vec<&str> = t.split('.').collect();
            parts.len() >= 2
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_string)
}

/// The driver release, or `unknown`.
pub fn driver_release() -> String {
    std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|t| parse_driver_release(&t))
        .unwrap_or_else(|| "unknown".to_string())
}

/// The commit being measured: `$MMQGEN_COMMIT` when set (binaries carried to a GPU machine run inside a copy
/// of the tree whose `.git` may be older than the build), else `git rev-parse HEAD` (with `+dirty` when
/// tracked files differ), else `unknown`.
pub fn commit() -> String {
    if let Ok(c) = std::env::var("MMQGEN_COMMIT") {
        if !c.trim().is_empty() {
            return c.trim().to_string();
        }
    }
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if let Some(head) = git(&["rev-parse", "HEAD"]).filter(|h| !h.is_empty()) {
        let dirty =
            git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        return if dirty { format!("{head}+dirty") } else { head };
    }
    "unknown".to_string()
}

/// What the run was measured on and with.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    pub gpu: String,
    pub arch: String,
    pub multiprocessors: u32,
    /// The CUDA version the driver supports, `13.0`.
    pub driver_cuda: String,
    /// The kernel module's version, `580.159.04`, or `unknown`.
    pub driver_release: String,
    /// `13.0`, or why it is unknown.
    pub nvrtc: String,
    pub commit: String,
    pub date: String,
    pub l2_bytes: usize,
    /// `device attribute` or `fallback (...)`.
    pub l2_source: String,
    /// How long the spin kernel ahead of each timed call lasts at least (at the top clock), µs.
    pub spin_us: f64,
    /// The device-to-device copy timed at the start of the run (`None` when it could not run).
    pub copy: Option<super::copy_rate::CopyRate>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_driver_versions() {
        assert_eq!(utc_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_from_unix(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(utc_from_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_from_unix(1_796_083_199), "2026-11-30T23:59:59Z");
        assert!(utc_now().ends_with('Z'));
        assert_eq!(
            parse_driver_release(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  \
                 (dvs-builder@U22)  Thu Oct  9 2025\nGCC version:  gcc version 12.3.0"
            ),
            Some("580.159.04".into())
        );
        assert_eq!(
            parse_driver_release(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19"
            ),
            Some("535.104.05".into())
        );
        assert_eq!(parse_driver_release("garbage"), None);
        assert!(!commit().is_empty());
    }
}
