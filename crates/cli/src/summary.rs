//! What `inspect` prints for a bare filter file.

use std::fmt;

/// How many keys a filter holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Count {
    /// The format records its insert count.
    Recorded(u64),
    /// The format records none; estimated from the fill.
    Estimated(f64),
}

/// The summary `inspect` prints for any bare filter file: its first line names the format and
/// version, the next five give k, bits, fill, estimated FPR and count.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Format and version, e.g. `spark v2`, `guava`, `parquet sbbf`, `bloomlab blocked v2`.
    pub format: String,
    /// Probes per key (fingerprint or result bits for cuckoo and Ribbon filters).
    pub k: u32,
    /// What `k` counts for this format.
    pub k_meaning: &'static str,
    /// Table size in bits.
    pub bits: u64,
    /// Fraction of bits (or slots) set, where the format defines one.
    pub fill: Option<f64>,
    /// Estimated false-positive rate.
    pub fpr: f64,
    /// Where the estimate comes from.
    pub fpr_source: &'static str,
    /// Keys held.
    pub count: Count,
    /// Further lines (our own files: the full inspection and audit).
    pub details: Option<String>,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.format)?;
        writeln!(f, "k:             {} ({})", self.k, self.k_meaning)?;
        writeln!(f, "bits:          {}", self.bits)?;
        match self.fill {
            Some(x) => writeln!(f, "fill:          {x:.4}")?,
            None => writeln!(f, "fill:          - (not defined for this variant)")?,
        }
        writeln!(
            f,
            "estimated FPR: {} ({})",
            percent(self.fpr),
            self.fpr_source
        )?;
        match self.count {
            Count::Recorded(n) => writeln!(f, "count:         {n}")?,
            Count::Estimated(x) if x.is_finite() => writeln!(
                f,
                "count:         ≈ {x:.0} (not recorded; estimated from the fill)"
            )?,
            Count::Estimated(_) => writeln!(
                f,
                "count:         unknown (not recorded; the filter is full)"
            )?,
        }
        if let Some(d) = &self.details {
            writeln!(f, "\n{}", d.trim_end())?;
        }
        Ok(())
    }
}

/// A rate as a percentage: four decimals, or three significant digits below 0.0001 %.
pub fn percent(x: f64) -> String {
    let p = 100.0 * x;
    if p == 0.0 || p >= 1e-4 {
        format!("{p:.4} %")
    } else {
        format!("{p:.2e} %")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn percentages() {
        assert_eq!(super::percent(0.0123), "1.2300 %");
        assert_eq!(super::percent(0.0), "0.0000 %");
        assert_eq!(super::percent(3.2e-14), "3.20e-12 %");
    }
}
