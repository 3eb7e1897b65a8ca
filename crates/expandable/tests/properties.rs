//! The expandable filter's multiset promise for arbitrary operation sequences with heavy
//! repeats (generic half in `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case
//! count): every accepted insert is removable once, a key held tests positive, and inserts
//! of a key held `MAX_COPIES` times are refused whole with `Error::TooManyCopies`.

use bloomlab_conformance::multiset_property;
use bloomlab_expandable::ExpandableFilter as F;

// Small starts (8–64 expected items) so the 24 pool keys make the table grow while hot keys
// crowd their buckets and the stash.
multiset_property!(|capacity| F::with_fpr(capacity, 0.05).unwrap());
