//! Double-double arithmetic (a value is an unevaluated sum `hi + lo`, ≈ 106 bits;
//! Dekker 1971, with the error-free transformations of Knuth's TwoSum and an FMA TwoProduct)
//! for the closed-form blocked FPR where its alternating sums cancel most of their digits.

#[cfg(not(feature = "std"))]
use bloomlab_core::math::float::FloatMath as _;

#[derive(Clone, Copy, Debug)]
struct Dd(f64, f64);

fn two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    let bb = s - a;
    Dd(s, (a - (s - bb)) + (b - bb))
}

fn quick(a: f64, b: f64) -> Dd {
    let s = a + b;
    Dd(s, b - (s - a))
}

impl Dd {
    fn add(self, o: Dd) -> Dd {
        let s = two_sum(self.0, o.0);
        let t = two_sum(self.1, o.1);
        let u = quick(s.0, s.1 + t.0);
        quick(u.0, u.1 + t.1)
    }
    fn neg(self) -> Dd {
        Dd(-self.0, -self.1)
    }
    fn mul(self, o: Dd) -> Dd {
        let p = self.0 * o.0;
        let e = self.0.mul_add(o.0, -p);
        quick(p, e + (self.0 * o.1 + self.1 * o.0))
    }
    fn mul_f(self, f: f64) -> Dd {
        self.mul(Dd(f, 0.0))
    }
    fn div_f(self, f: f64) -> Dd {
        let q1 = self.0 / f;
        let r = self.add(Dd(q1, 0.0).mul_f(f).neg());
        quick(q1, r.0 / f)
    }
    #[cfg(test)]
    fn powi(self, mut n: usize) -> Dd {
        let (mut base, mut acc) = (self, Dd(1.0, 0.0));
        while n > 0 {
            if n & 1 == 1 {
                acc = acc.mul(base);
            }
            base = base.mul(base);
            n >>= 1;
        }
        acc
    }
}

/// `e^x − 1` for `|x| ≤ 1`: Taylor series of `e^(x/2^10) − 1` (ten terms reach 2^-110),
/// then ten doublings `expm1(2y) = expm1(y)·(expm1(y) + 2)`, which lose no digits near 0.
#[cfg(test)]
fn expm1_small(x: Dd) -> Dd {
    const HALVINGS: i32 = 10;
    let y = Dd(x.0 / 1024.0, x.1 / 1024.0);
    // Horner: y·(1 + y·(1/2! + y·(1/3! + … + y/11!))), the reciprocal factorials in
    // double-double, computed once (ten divisions fewer per call than term by term).
    let inv = inverse_factorials();
    let mut sum = inv[11];
    for m in (1..=10).rev() {
        sum = sum.mul(y).add(inv[m]);
    }
    let mut sum = sum.mul(y);
    for _ in 0..HALVINGS {
        sum = sum.mul(sum.add(Dd(2.0, 0.0)));
    }
    sum
}

/// `1/m!` for `m = 0..=11` in double-double (computed once per process with std, once per
/// call without it).
fn inverse_factorials() -> [Dd; 12] {
    let compute = || {
        let mut t = [Dd(1.0, 0.0); 12];
        for m in 1..12 {
            t[m] = t[m - 1].div_f(m as f64);
        }
        t
    };
    #[cfg(feature = "std")]
    {
        static T: std::sync::OnceLock<[Dd; 12]> = std::sync::OnceLock::new();
        *T.get_or_init(compute)
    }
    #[cfg(not(feature = "std"))]
    compute()
}

/// `e^x − 1`: [`expm1_small`] near 0, else `2^n·e^r − 1` with `x = n·ln 2 + r`.
#[cfg(test)]
fn expm1(x: Dd) -> Dd {
    if x.0.abs() <= 1.0 {
        return expm1_small(x);
    }
    if x.0 < -800.0 {
        return Dd(-1.0, 0.0);
    }
    const LN2: Dd = Dd(core::f64::consts::LN_2, 2.319_046_813_846_299_6e-17);
    let n = (x.0 / LN2.0).round();
    let r = x.add(LN2.mul_f(n).neg());
    let scale = 2f64.powi(n as i32);
    let e = expm1_small(r).add(Dd(1.0, 0.0));
    Dd(e.0 * scale, e.1 * scale).add(Dd(-1.0, 0.0))
}

/// The closed form of `blocked_fpr_closed` with the previous arrangement — every `exp`
/// term by [`expm1`], each inner alternating sum in double-double, `coef` in f64 — kept
/// as the reference the faster [`blocked_fpr_closed`] is tested against.
#[cfg(test)]
#[allow(clippy::needless_range_loop)] // as in `closed_form`
pub(super) fn blocked_fpr_closed_reference(lambda: f64, k: usize, b: f64, coef: &[f64]) -> f64 {
    let mut e = [Dd(0.0, 0.0); super::MAX_HASHES as usize + 1];
    for (l, el) in e.iter_mut().enumerate().take(k + 1).skip(1) {
        // (1 − l/B)^k − 1, then λ·that, then expm1.
        let base = Dd(1.0, 0.0).add(Dd(l as f64, 0.0).div_f(b).neg());
        let q_minus_1 = base.powi(k).add(Dd(-1.0, 0.0));
        *el = expm1(q_minus_1.mul_f(lambda));
    }
    let mut binom = [0.0f64; super::MAX_HASHES as usize + 1];
    binom[0] = 1.0;
    let mut total = Dd(0.0, 0.0);
    for j in 1..=k {
        for l in (1..=j).rev() {
            binom[l] += binom[l - 1];
        }
        let mut inner = Dd(0.0, 0.0);
        for l in 1..=j {
            let t = e[l].mul_f(binom[l]);
            inner = inner.add(if l % 2 == 0 { t } else { t.neg() });
        }
        total = total.add(inner.mul_f(coef[j]));
    }
    total.0 + total.1
}

const W: usize = super::MAX_HASHES as usize + 1;

/// The closed form's outer sums folded into one weight per `l`:
/// `w[l] = Σ_{j=l..k} S(k,j)·(B)_j/B^k · C(j,l)`, all in double-double (the alternating
/// sum over `l` then cancels against weights as precise as its terms). They depend on
/// `k` and `B` only; for 512-bit blocks each `k`'s row is computed once per process (with
/// std; without it, on every call).
fn weights(k: usize, b: f64) -> [Dd; W] {
    #[cfg(feature = "std")]
    {
        static W512: [std::sync::OnceLock<[Dd; W]>; W] = [const { std::sync::OnceLock::new() }; W];
        if b == 512.0 {
            return *W512[k].get_or_init(|| compute_weights(k, b));
        }
    }
    compute_weights(k, b)
}

#[allow(clippy::needless_range_loop)] // j and l index three arrays
fn compute_weights(k: usize, b: f64) -> [Dd; W] {
    // Stirling numbers of the second kind S(k, j), row by row.
    let mut stirling = [Dd(0.0, 0.0); W];
    stirling[0] = Dd(1.0, 0.0);
    for n in 1..=k {
        for j in (1..=n).rev() {
            stirling[j] = stirling[j].mul_f(j as f64).add(stirling[j - 1]);
        }
        stirling[0] = Dd(0.0, 0.0);
    }
    // coef[j] = S(k, j)·(B)_j / B^k: (B)_j / B^j by factors (B − i)/B, then B^(j − k).
    let mut coef = [Dd(0.0, 0.0); W];
    let mut falling = Dd(1.0, 0.0);
    for j in 1..=k {
        falling = falling.mul(Dd((b - (j - 1) as f64).max(0.0), 0.0).div_f(b));
        let mut c = stirling[j].mul(falling);
        for _ in j..k {
            c = c.div_f(b);
        }
        coef[j] = c;
    }
    // w[l] = Σ_j coef[j]·C(j, l), the binomials row by row (exact in double-double).
    let mut binom = [Dd(0.0, 0.0); W];
    binom[0] = Dd(1.0, 0.0);
    let mut w = [Dd(0.0, 0.0); W];
    for j in 1..=k {
        for l in (1..=j).rev() {
            binom[l] = binom[l].add(binom[l - 1]);
        }
        for l in 1..=j {
            w[l] = w[l].add(coef[j].mul(binom[l]));
        }
    }
    w
}

/// [`expm1`] of every `x[l]`, `l` in `1..=k`, into `out[l]`: the same operations on each
/// element (so the same results, and errors as smooth in `x` as the closed form's
/// differences need), run as one pass per step over all elements instead of one element
/// after another. Each step of a double-double Horner chain waits for the last, about 15
/// cycles; `k` independent chains side by side keep the core busy instead.
#[allow(clippy::needless_range_loop)] // three arrays indexed together
fn expm1_each(x: &[Dd; W], k: usize, out: &mut [Dd; W]) {
    const LN2: Dd = Dd(core::f64::consts::LN_2, 2.319_046_813_846_299_6e-17);
    const HALVINGS: i32 = 10;
    let inv = inverse_factorials();
    // `x = n·ln 2 + r` where |x| > 1, as `expm1` reduces it; `n = 0`, `r = x` elsewhere.
    let mut n = [0.0f64; W];
    let mut y = [Dd(0.0, 0.0); W];
    for l in 1..=k {
        let r = if x[l].0.abs() <= 1.0 || x[l].0 < -800.0 {
            x[l]
        } else {
            n[l] = (x[l].0 / LN2.0).round();
            x[l].add(LN2.mul_f(n[l]).neg())
        };
        y[l] = Dd(r.0 / 1024.0, r.1 / 1024.0);
    }
    // `expm1_small` of every `r`, step by step.
    let mut sum = [inv[11]; W];
    for m in (1..=10).rev() {
        for l in 1..=k {
            sum[l] = sum[l].mul(y[l]).add(inv[m]);
        }
    }
    for l in 1..=k {
        sum[l] = sum[l].mul(y[l]);
    }
    for _ in 0..HALVINGS {
        for l in 1..=k {
            sum[l] = sum[l].mul(sum[l].add(Dd(2.0, 0.0)));
        }
    }
    for l in 1..=k {
        out[l] = if x[l].0 < -800.0 {
            Dd(-1.0, 0.0)
        } else if n[l] == 0.0 {
            sum[l]
        } else {
            let scale = 2f64.powi(n[l] as i32);
            let e = sum[l].add(Dd(1.0, 0.0));
            Dd(e.0 * scale, e.1 * scale).add(Dd(-1.0, 0.0))
        };
    }
}

#[test]
fn expm1_each_is_expm1_element_by_element() {
    // The same operations, so the same bits, for arguments in every branch.
    let mut x = [Dd(0.0, 0.0); W];
    for (l, v) in x.iter_mut().enumerate().skip(1) {
        *v = Dd(-(l as f64).powf(1.9) * 0.05, 1e-18 * l as f64);
    }
    x[3] = Dd(-900.0, 0.0);
    x[5] = Dd(0.75, 0.0);
    let mut out = [Dd(0.0, 0.0); W];
    expm1_each(&x, W - 1, &mut out);
    for l in 1..W {
        let want = expm1(x[l]);
        assert_eq!((out[l].0, out[l].1), (want.0, want.1), "x = {:?}", x[l]);
    }
}

/// The closed form of `blocked_fpr_closed` in double-double, and its derivative in `λ`:
/// `F = Σ_l (−1)^l·w[l]·e[l]` with `e[l] = exp(λ(q_l − 1)) − 1`, `q_l = (1 − l/B)^k`
/// (by repeated squaring, exact to double-double since `1 − l/B` is), and
/// `dF/dλ = Σ_l (−1)^l·w[l]·(q_l − 1)·(e[l] + 1)`. O(k) per call with the weights cached
/// ([`weights`]), every `l`'s powers and exponential computed side by side
/// ([`expm1_each`]).
#[allow(clippy::needless_range_loop)] // as in `closed_form`
#[cfg(test)]
pub(super) fn blocked_fpr_closed(lambda: f64, k: usize, b: f64) -> (f64, f64) {
    let (f, slope, _) = blocked_fpr_closed_with_magnitude(lambda, k, b);
    (f, slope)
}

/// How far the double-double sum may cancel and still hold 1e-7 of its result: its
/// error is about 10^-32 of its magnitude (measured against 60-digit values: 0.6–9·10^-33
/// times magnitude ÷ result at seven points up to a ratio of 6·10^24), so 10^25 keeps
/// 1e-7 — itself thirty times finer than the sizing's resolution needs (10^-4 bits/item
/// on a few hundred, where `ln FPR` moves about 0.1 per bit/item).
pub(super) const MAX_CANCELLATION: f64 = 1e25;

/// [`blocked_fpr_closed`] where it holds 1e-7 of its result (see [`MAX_CANCELLATION`]),
/// `None` where the cancellation leaves fewer digits.
pub(super) fn blocked_fpr_closed_checked(lambda: f64, k: usize, b: f64) -> Option<(f64, f64)> {
    let (f, slope, magnitude) = blocked_fpr_closed_with_magnitude(lambda, k, b);
    (f > 0.0 && f * MAX_CANCELLATION >= magnitude).then_some((f, slope))
}

/// [`blocked_fpr_closed`] and the magnitude of its sum, `Σ_l w[l]·|e[l]|`.
#[allow(clippy::needless_range_loop)] // as in `closed_form`
pub(super) fn blocked_fpr_closed_with_magnitude(lambda: f64, k: usize, b: f64) -> (f64, f64, f64) {
    let w = weights(k, b);
    // q_l − 1 for every l: (1 − l/B)^k by the bits of k, all l side by side.
    let mut base = [Dd(0.0, 0.0); W];
    let mut q = [Dd(1.0, 0.0); W];
    for l in 1..=k {
        base[l] = Dd(1.0, 0.0).add(Dd(l as f64, 0.0).div_f(b).neg());
    }
    let mut bits = k;
    while bits > 0 {
        for l in 1..=k {
            if bits & 1 == 1 {
                q[l] = q[l].mul(base[l]);
            }
            base[l] = base[l].mul(base[l]);
        }
        bits >>= 1;
    }
    let mut x = [Dd(0.0, 0.0); W];
    for l in 1..=k {
        q[l] = q[l].add(Dd(-1.0, 0.0));
        x[l] = q[l].mul_f(lambda);
    }
    let mut e = [Dd(0.0, 0.0); W];
    expm1_each(&x, k, &mut e);
    let (mut total, mut slope, mut magnitude) = (Dd(0.0, 0.0), Dd(0.0, 0.0), 0.0);
    for l in 1..=k {
        let t = w[l].mul(e[l]);
        let u = w[l].mul(q[l]).mul(e[l].add(Dd(1.0, 0.0)));
        magnitude += t.0.abs();
        if l % 2 == 0 {
            (total, slope) = (total.add(t), slope.add(u));
        } else {
            (total, slope) = (total.add(t.neg()), slope.add(u.neg()));
        }
    }
    (total.0 + total.1, slope.0 + slope.1, magnitude)
}
