//! `inspect`: read any serialized filter of ours, say what it is, and audit it against
//! seed 003's checklist, each item with evidence — and say plainly which items a file alone
//! cannot prove.

use std::fmt;

use bloomlab_core::format;
use bloomlab_core::hash::SchemeId;
use bloomlab_core::{FilterParams, Result, SchemeDescriptor, math};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::any::{AnyFilter, Header, Layout, header};

/// Non-member probes `inspect` sends to measure the FPR (random 16-byte keys; a collision with
/// an inserted key has probability ~ n/2^128).
pub const INSPECT_PROBES: u64 = 100_000;

/// Outcome of one audit item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The file shows the item is met.
    Pass,
    /// The file shows the item is not met.
    Fail,
    /// Worth a look; not a failure.
    Warn,
    /// A file alone cannot prove this item; what it does show is in the evidence.
    CannotTell,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Warn => "WARN",
            Verdict::CannotTell => "CANNOT TELL FROM THE FILE",
        })
    }
}

/// One checklist item with its evidence.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditItem {
    /// The checklist line.
    pub item: &'static str,
    /// The verdict.
    pub verdict: Verdict,
    /// What the file showed.
    pub evidence: String,
}

/// Everything `inspect` found.
#[derive(Clone, Debug, PartialEq)]
pub struct Inspection {
    /// File size in bytes.
    pub file_bytes: usize,
    /// Header: layout, variant, hash scheme.
    pub header: Header,
    /// Whether the filter is keyed (figures that need the secret are then absent).
    pub keyed: bool,
    /// Parameters it was built with.
    pub params: FilterParams,
    /// Inserts recorded.
    pub count: u64,
    /// Table bits per inserted item.
    pub bits_per_item: f64,
    /// Fill ratio, where defined.
    pub fill_ratio: Option<f64>,
    /// FPR from the fill, where defined.
    pub current_fpr: Option<f64>,
    /// FPR the formula expects at the recorded count.
    pub expected_fpr: f64,
    /// Estimated distinct items from the fill, where defined.
    pub estimated_len: Option<f64>,
    /// `(probes, positives)` of a measured FPR on random non-members (not for keyed files).
    pub measured: Option<(u64, u64)>,
    /// Count above design capacity.
    pub past_design_load: bool,
    /// The seed 003 checklist.
    pub audit: Vec<AuditItem>,
}

/// Inspect a buffer. Unknown or damaged buffers give the decoder's typed error.
pub fn inspect(bytes: &[u8]) -> Result<Inspection> {
    let h = header(bytes)?;
    let unkeyed_scheme = matches!(h.scheme.id, SchemeId::Xxh3Km | SchemeId::ParquetXxh64);
    let keyed = !unkeyed_scheme || h.scheme.key_check != 0;
    let (filter, _) = if keyed {
        // Structure only: relabel so the public decoder validates and reads it.
        let mut b = bytes.to_vec();
        format::relabel_as_unkeyed(&mut b);
        AnyFilter::decode(&b)?
    } else {
        AnyFilter::decode(bytes)?
    };
    let f = filter.as_filter();
    let params = f.params();
    let count = f.len();
    let measured = (!keyed).then(|| {
        let mut rng = ChaCha8Rng::seed_from_u64(0x1d5ec7);
        let mut key = [0u8; 16];
        let positives = (0..INSPECT_PROBES)
            .filter(|_| {
                rng.fill_bytes(&mut key);
                f.might_contain_bytes(&key)
            })
            .count() as u64;
        (INSPECT_PROBES, positives)
    });
    let mut ins = Inspection {
        file_bytes: bytes.len(),
        header: h,
        keyed,
        params: FilterParams {
            scheme: h.scheme,
            ..params
        },
        count,
        bits_per_item: if count == 0 {
            f64::INFINITY
        } else {
            f.size_in_bytes() as f64 * 8.0 / count as f64
        },
        fill_ratio: filter.fill_ratio(),
        current_fpr: filter.current_fpr(),
        expected_fpr: f.expected_fpr(),
        estimated_len: filter.estimated_len(),
        measured,
        past_design_load: count > params.capacity,
        audit: Vec::new(),
    };
    ins.audit = audit(&ins, filter.supports_removal());
    Ok(ins)
}

fn pct(x: f64) -> String {
    format!("{:.4} %", 100.0 * x)
}

fn audit(i: &Inspection, removable: bool) -> Vec<AuditItem> {
    let measured = measured_text(i);
    vec![
        semantics_item(i, &measured),
        sizing_item(i, &measured),
        deletes_item(i, removable),
        cache_item(i),
    ]
}

/// What the probes measured, as the evidence quotes it.
fn measured_text(i: &Inspection) -> String {
    match i.measured {
        Some((n, pos)) => format!(
            "measured on {n} random non-member probes: {pos} answered \"maybe\" ({})",
            pct(pos as f64 / n as f64)
        ),
        None => "keyed file: probing needs the secret, so no FPR was measured here".into(),
    }
}

/// 1. Query semantics: what the file can say about them.
fn semantics_item(i: &Inspection, measured: &str) -> AuditItem {
    let p = &i.params;
    AuditItem {
        item: "1. Query semantics: absent means absent, present means maybe; no caller treats \"maybe\" as a yes",
        verdict: Verdict::CannotTell,
        evidence: format!(
            "the file is a {} filter: a \"definitely not\" answer is a proof, a \"maybe\" is wrong for about {} of absent keys ({measured}). How callers act on \"maybe\" lives in their code, not in this file.",
            p.variant,
            pct(i.current_fpr.unwrap_or(i.expected_fpr)),
        ),
    }
}

/// 2. Sizing: the table against the inserts, past the design load or not.
fn sizing_item(i: &Inspection, measured: &str) -> AuditItem {
    let p = &i.params;
    let target = p
        .target_fpr
        .map(|t| format!("target {}", pct(t)))
        .unwrap_or_else(|| "no target recorded".into());
    let blm1 = i.header.layout == Layout::Blm1;
    let (verdict, load) = if i.past_design_load {
        (
            // BLM1 records no capacity: the k-optimal load m·ln 2/k stands in for it. The
            // sizing rule k = round((m/n)·ln 2) picks this k for any n up to m·ln 2/(k − ½),
            // so loads up to k/(k − ½) times that are only a warning.
            if blm1
                && (i.count as f64)
                    <= p.capacity as f64 * f64::from(p.hashes) / (f64::from(p.hashes) - 0.5)
            {
                Verdict::Warn
            } else {
                Verdict::Fail
            },
            format!(
                "PAST DESIGN LOAD: {} inserts for a capacity of {} ({:.2}×) — the FPR has climbed past what it was sized for; rebuild larger or use a scalable filter",
                i.count,
                p.capacity,
                i.count as f64 / p.capacity as f64
            ),
        )
    } else {
        (
            Verdict::Pass,
            format!(
                "{} inserts within a capacity of {} ({:.0} % of design load)",
                i.count,
                p.capacity,
                100.0 * i.count as f64 / p.capacity as f64
            ),
        )
    };
    let load = if blm1 {
        format!("{load} (BLM1 records no capacity; the k-optimal load m·ln 2/k is used)")
    } else {
        load
    };
    AuditItem {
        item: "2. Sizing: bits per key and hash count stated, array sized for the largest set, FPR measured not assumed",
        verdict,
        evidence: format!(
            "{} table bits, {} {} per key, {:.2} bits per inserted item ({target}); {load}; formula expects {} at this count; {measured}",
            p.table_bits,
            p.hashes,
            p.variant.hashes().unit(),
            i.bits_per_item,
            pct(i.expected_fpr),
        ),
    }
}

/// 3. Deletes: supported at a stated space cost, or absent by design.
fn deletes_item(i: &Inspection, removable: bool) -> AuditItem {
    let p = &i.params;
    if removable {
        let classic = p
            .target_fpr
            .and_then(|t| math::classic_bits_per_item(t).ok())
            .map(|b| format!(" (a classic filter needs {b:.2} bits/item at the same target)"))
            .unwrap_or_default();
        AuditItem {
            item: "3. Deletes: absent by design, or a deletable variant with its space cost stated",
            verdict: Verdict::Pass,
            evidence: format!(
                "{} supports removal at {:.2} bits per inserted item{classic}; removing a key that was never inserted can create false negatives",
                p.variant, i.bits_per_item
            ),
        }
    } else {
        AuditItem {
            item: "3. Deletes: absent by design, or a deletable variant with its space cost stated",
            verdict: Verdict::Pass,
            evidence: format!(
                "{} filters cannot delete: right for immutable tables (SSTables); whether the data set is immutable is not in the file",
                p.variant
            ),
        }
    }
}

/// 4. Cache placement: only the bytes a load costs are in the file.
fn cache_item(i: &Inspection) -> AuditItem {
    AuditItem {
        item: "4. Cache placement: the filter lives with its data and loads into one shared cache",
        verdict: Verdict::CannotTell,
        evidence: format!(
            "a file cannot show where it is cached; each load of this filter costs {} bytes of the shared cache",
            i.file_bytes
        ),
    }
}

impl fmt::Display for Inspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.params;
        writeln!(f, "format:        {}", self.header.layout)?;
        writeln!(f, "variant:       {}", p.variant)?;
        writeln!(f, "hash scheme:   {}", describe_scheme(&self.header.scheme))?;
        writeln!(f, "file size:     {} bytes", self.file_bytes)?;
        writeln!(f, "table bits:    {}", p.table_bits)?;
        writeln!(f, "k / fp bits:   {}", p.hashes)?;
        writeln!(f, "capacity:      {}", p.capacity)?;
        match p.target_fpr {
            Some(t) => writeln!(f, "target FPR:    {}", pct(t))?,
            None => writeln!(f, "target FPR:    (not recorded)")?,
        }
        writeln!(f, "count:         {}", self.count)?;
        writeln!(f, "bits/item:     {:.3}", self.bits_per_item)?;
        if let Some(x) = self.fill_ratio {
            writeln!(f, "fill ratio:    {x:.4}")?;
        }
        writeln!(f, "expected FPR:  {}", pct(self.expected_fpr))?;
        if let Some(x) = self.current_fpr {
            writeln!(f, "current FPR:   {} (from the fill)", pct(x))?;
        }
        if let Some((n, pos)) = self.measured {
            writeln!(
                f,
                "measured FPR:  {} ({pos} of {n} random probes)",
                pct(pos as f64 / n as f64)
            )?;
        }
        if let Some(x) = self.estimated_len {
            writeln!(f, "est. distinct: {x:.0}")?;
        }
        writeln!(
            f,
            "design load:   {}",
            if self.past_design_load {
                "PAST design load"
            } else {
                "within design load"
            }
        )?;
        writeln!(f, "\naudit (seed 003 checklist):")?;
        for a in &self.audit {
            writeln!(f, "- [{}] {}\n    {}", a.verdict, a.item, a.evidence)?;
        }
        Ok(())
    }
}

fn describe_scheme(s: &SchemeDescriptor) -> String {
    if s.key_check == 0 {
        s.to_string()
    } else {
        format!("{s} — keyed: queries need the secret; figures below come from the structure alone")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomlab_classic::BloomFilter;
    use bloomlab_core::format::Variant;

    /// The positives `inspect` measured among its probes lie within 5 σ of the expected FPR.
    fn assert_measured_fpr_near_expected(i: &Inspection) {
        let (n, pos) = i.measured.unwrap();
        let e = i.expected_fpr;
        assert!(
            (pos as f64 - n as f64 * e).abs() < 5.0 * (n as f64 * e).sqrt(),
            "{i:?}"
        );
    }

    #[test]
    fn inspects_a_classic_filter_in_both_layouts() {
        let mut f = BloomFilter::with_fpr(10_000, 0.01).unwrap();
        (0..10_000u32).for_each(|i| {
            f.insert(&i);
        });
        for (bytes, blm1) in [(f.to_bytes(), false), (f.to_blm1().unwrap(), true)] {
            let i = inspect(&bytes).unwrap();
            assert_eq!(i.params.variant, Variant::Classic);
            assert_eq!(i.count, 10_000);
            assert!(!i.keyed);
            // BLM1 has no capacity field: the k-optimal load (m·ln 2/7 ≈ 9 490) stands in,
            // so 10 000 keys show as a warning there, never as a failure.
            assert_eq!(i.past_design_load, blm1);
            assert_measured_fpr_near_expected(&i);
            assert_eq!(i.audit.len(), 4);
            let want = if blm1 { Verdict::Warn } else { Verdict::Pass };
            assert_eq!(i.audit[1].verdict, want);
            assert!(i.to_string().contains("CANNOT TELL"));
        }
    }

    #[test]
    fn flags_overfill() {
        let mut f = BloomFilter::with_fpr(1_000, 0.01).unwrap();
        (0..3_000u32).for_each(|i| {
            f.insert(&i);
        });
        let i = inspect(&f.to_bytes()).unwrap();
        assert!(i.past_design_load);
        assert_eq!(i.audit[1].verdict, Verdict::Fail);
        assert!(i.audit[1].evidence.contains("3.00×"));
    }

    #[test]
    fn keyed_files_show_structure_only() {
        let scheme = bloomlab_keyed::SipScheme::from_secret([3; 16]);
        let mut f = BloomFilter::with_fpr_and_scheme(1_000, 0.01, scheme).unwrap();
        f.insert("a");
        let i = inspect(&f.to_bytes()).unwrap();
        assert!(i.keyed && i.measured.is_none());
        assert_eq!(i.count, 1);
        assert!(i.to_string().contains("keyed"));
    }

    #[test]
    fn inspects_blocked_and_counting_filters() {
        let mut b = bloomlab_blocked::BlockedBloomFilter::with_fpr(5_000, 0.01).unwrap();
        let mut c = bloomlab_counting::CountingBloomFilter::with_fpr(5_000, 0.01).unwrap();
        for i in 0..5_000u32 {
            b.insert(&i);
            c.insert(&i);
        }
        let ib = inspect(&b.to_bytes()).unwrap();
        assert_eq!(ib.params.variant, Variant::Blocked);
        assert!(ib.audit[2].evidence.contains("cannot delete"));
        let ic = inspect(&c.to_bytes()).unwrap();
        assert_eq!(ic.params.variant, Variant::Counting);
        assert!(
            ic.audit[2].evidence.contains("supports removal"),
            "{}",
            ic.audit[2].evidence
        );
        for i in [&ib, &ic] {
            assert_measured_fpr_near_expected(i);
        }
    }

    #[test]
    fn inspects_sbbf_filters() {
        let mut f = bloomlab_sbbf::Sbbf::with_fpr(5_000, 0.01).unwrap();
        for i in 0..5_000u32 {
            f.insert(&i);
        }
        let i = inspect(&f.to_bytes()).unwrap();
        assert_eq!(i.params.variant, Variant::Sbbf);
        assert!(!i.keyed && i.estimated_len.is_some());
        assert_measured_fpr_near_expected(&i);
    }

    #[test]
    fn inspects_cuckoo_and_scalable_filters() {
        let mut c = bloomlab_cuckoo::CuckooFilter::with_fpr(5_000, 0.01).unwrap();
        let mut s = bloomlab_scalable::ScalableBloomFilter::with_fpr(500, 0.01).unwrap();
        for i in 0..5_000u32 {
            c.insert(&i).unwrap();
            s.insert(&i).unwrap();
        }
        let ic = inspect(&c.to_bytes()).unwrap();
        assert_eq!(ic.params.variant, Variant::Cuckoo);
        assert!(ic.audit[2].evidence.contains("supports removal"));
        let is = inspect(&s.to_bytes()).unwrap();
        assert_eq!(is.params.variant, Variant::Scalable);
        assert_eq!(is.count, 5_000);
        for i in [&ic, &is] {
            assert_measured_fpr_near_expected(i);
        }
    }

    #[test]
    fn inspects_a_ribbon_filter() {
        let f = bloomlab_ribbon::RibbonFilter::build(0..5_000u32, 0.01).unwrap();
        let i = inspect(&f.to_bytes()).unwrap();
        assert_eq!(
            (i.params.variant, i.count, i.params.hashes),
            (Variant::Ribbon, 5_000, 7)
        );
        assert!(
            i.audit[1].evidence.contains("7 result bits per key"),
            "{i:?}"
        );
        assert_measured_fpr_near_expected(&i);
    }

    #[test]
    fn garbage_is_a_clear_error() {
        for bad in [&b""[..], b"hello world", &[0u8; 64]] {
            assert!(inspect(bad).is_err());
        }
        let mut f = BloomFilter::with_fpr(100, 0.01).unwrap().to_bytes();
        let last = f.len() - 1;
        f[last] ^= 1;
        let e = inspect(&f).unwrap_err().to_string();
        assert!(e.contains("checksum"), "{e}");
    }
}
