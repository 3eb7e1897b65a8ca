//! Key files: one key per line, and how a line becomes a key of each type.

use std::fmt;

use clap::ValueEnum;

use crate::CliError;

/// How a line of a key file is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeyType {
    /// A decimal integer (`-` allowed, no spaces, no `+`), −2^63 … 2^63 − 1.
    I64,
    /// The line's text, which must be valid UTF-8.
    Str,
    /// The line's bytes as they are (UTF-8 or not).
    Bytes,
}

impl fmt::Display for KeyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyType::I64 => "i64",
            KeyType::Str => "str",
            KeyType::Bytes => "bytes",
        })
    }
}

/// One key, typed as the JVM libraries take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypedKey<'a> {
    /// Spark's `putLong`, Guava's `longFunnel`.
    I64(i64),
    /// Spark's `putString`, Guava's `stringFunnel(UTF_8)`.
    Str(&'a str),
    /// Spark's `putBinary`, Guava's `byteArrayFunnel`.
    Bytes(&'a [u8]),
}

impl TypedKey<'_> {
    /// The bytes bloomlab's own filters (and the Parquet SBBF) hash for this key: an `i64` as
    /// its 8 little-endian bytes (the workspace's `Key` encoding and Parquet's plain INT64
    /// encoding), a string or byte array as its bytes.
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match *self {
            TypedKey::I64(v) => f(&v.to_le_bytes()),
            TypedKey::Str(s) => f(s.as_bytes()),
            TypedKey::Bytes(b) => f(b),
        }
    }
}

/// The lines of a key file: split at `\n`; a `\r` right before the `\n` is dropped too (so
/// files with Windows line ends give the same keys); a last line without a newline is a key,
/// and a file ending in a newline has no empty key after it. Empty lines are keys.
pub fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    let empty = data.is_empty();
    body.split(|&b| b == b'\n')
        .filter(move |_| !empty)
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
}

/// Parse one line (numbered from 1, for the error) as a key of type `t`.
pub fn parse(t: KeyType, line: &[u8], number: usize) -> Result<TypedKey<'_>, CliError> {
    match t {
        KeyType::Bytes => Ok(TypedKey::Bytes(line)),
        KeyType::Str => std::str::from_utf8(line)
            .map(TypedKey::Str)
            .map_err(|e| bad_line(number, line, &format!("not valid UTF-8 ({e})"))),
        KeyType::I64 => parse_decimal::<i64>(line, number).map(TypedKey::I64),
    }
}

/// A strict decimal integer: an optional `-`, then digits only.
pub fn parse_decimal<T: std::str::FromStr>(line: &[u8], number: usize) -> Result<T, CliError>
where
    T::Err: fmt::Display,
{
    let text = std::str::from_utf8(line)
        .map_err(|_| bad_line(number, line, "not a decimal integer (not UTF-8)"))?;
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad_line(
            number,
            line,
            "not a decimal integer (an optional '-', then digits)",
        ));
    }
    text.parse::<T>()
        .map_err(|e| bad_line(number, line, &format!("not a decimal integer here: {e}")))
}

/// Hex digits (upper or lower case, an even number of them) as bytes.
pub fn parse_hex(line: &[u8], number: usize) -> Result<Vec<u8>, CliError> {
    if !line.len().is_multiple_of(2) {
        return Err(bad_line(number, line, "an odd number of hex digits"));
    }
    line.chunks_exact(2)
        .map(|p| {
            let hi = (p[0] as char).to_digit(16);
            let lo = (p[1] as char).to_digit(16);
            match (hi, lo) {
                (Some(h), Some(l)) => Ok((h * 16 + l) as u8),
                _ => Err(bad_line(number, line, "not hex digits")),
            }
        })
        .collect()
}

/// The error for line `number`, quoting (at most 40 characters of) the line.
pub fn bad_line(number: usize, line: &[u8], why: &str) -> CliError {
    let shown: String = String::from_utf8_lossy(line).chars().take(40).collect();
    let more = if shown.chars().count() < String::from_utf8_lossy(line).chars().count() {
        "…"
    } else {
        ""
    };
    CliError::BadKey(format!("line {number}: {shown:?}{more}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(data: &[u8]) -> Vec<&[u8]> {
        lines(data).collect()
    }

    #[test]
    fn line_splitting_rules() {
        assert!(all(b"").is_empty());
        assert_eq!(all(b"\n"), vec![&b""[..]]);
        assert_eq!(all(b"a\nb"), vec![&b"a"[..], b"b"]);
        assert_eq!(all(b"a\nb\n"), vec![&b"a"[..], b"b"]);
        assert_eq!(all(b"a\r\n\r\nb\r"), vec![&b"a"[..], b"", b"b"]);
        assert_eq!(all(b"\n\n"), vec![&b""[..], b""]);
        assert_eq!(all(b"x\ry\n"), vec![&b"x\ry"[..]]);
    }

    #[test]
    fn typed_parsing() {
        assert_eq!(
            parse(KeyType::I64, b"-9223372036854775808", 1).unwrap(),
            TypedKey::I64(i64::MIN)
        );
        for bad in [
            &b""[..],
            b"+1",
            b" 1",
            b"1 ",
            b"9223372036854775808",
            b"0x10",
            b"-",
        ] {
            let e = parse(KeyType::I64, bad, 7).unwrap_err().to_string();
            assert!(e.starts_with("line 7: "), "{e}");
        }
        assert_eq!(
            parse(KeyType::Str, "é".as_bytes(), 1).unwrap(),
            TypedKey::Str("é")
        );
        assert!(parse(KeyType::Str, &[0xff], 2).is_err());
        assert_eq!(
            parse(KeyType::Bytes, &[0xff], 2).unwrap(),
            TypedKey::Bytes(&[0xff])
        );
        assert_eq!(parse_hex(b"00aBff", 1).unwrap(), vec![0, 0xab, 0xff]);
        assert!(parse_hex(b"abc", 1).is_err() && parse_hex(b"zz", 1).is_err());
        TypedKey::I64(-2).with_bytes(|b| assert_eq!(b, (-2i64).to_le_bytes()));
    }
}
