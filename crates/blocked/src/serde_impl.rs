//! serde support: the same fields as the byte format (blocks flattened to words), validated
//! the same way on the way in. Only schemes constructible with `Default` (unkeyed)
//! deserialize; a keyed filter must be loaded from bytes with its secret.
use super::*;
use bloomlab_core::hash::SchemeDescriptor;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Serialize, Deserialize)]
struct Repr {
    blocks: u64,
    k: u32,
    count: u64,
    capacity: u64,
    target_fpr: Option<f64>,
    /// Absent in the first layout's serializations, which predate the field.
    #[serde(default = "first_layout")]
    layout: Layout,
    scheme: SchemeDescriptor,
    words: Vec<u64>,
}

fn first_layout() -> Layout {
    Layout::Wide64
}

impl<S: HashScheme> Serialize for BlockedBloomFilter<S> {
    fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        Repr {
            blocks: self.blocks(),
            k: self.cold.k,
            count: self.cold.meta.count(),
            capacity: self.cold.meta.capacity(),
            target_fpr: self.cold.meta.target_fpr(),
            layout: self.cold.layout,
            scheme: self.cold.meta.scheme().descriptor(),
            words: self.blocks.iter().flat_map(|b| b.0).collect(),
        }
        .serialize(s)
    }
}

impl<'de, S: HashScheme + Default> Deserialize<'de> for BlockedBloomFilter<S> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let r = Repr::deserialize(d)?;
        let scheme =
            bloomlab_core::meta::default_scheme_for::<S>(r.scheme).map_err(D::Error::custom)?;
        if r.words.len() as u64 != r.blocks.saturating_mul(8) || r.words.is_empty() {
            return Err(D::Error::custom(DecodeError::field(
                "words",
                format!("{} words for {} blocks", r.words.len(), r.blocks),
            )));
        }
        let blocks = r
            .words
            .chunks_exact(8)
            .map(|c| Block(c.try_into().expect("8 words")))
            .collect();
        BlockedBloomFilter::from_parts(
            blocks,
            r.k,
            r.count,
            r.capacity,
            r.target_fpr,
            r.layout,
            scheme,
        )
        .map_err(D::Error::custom)
    }
}
