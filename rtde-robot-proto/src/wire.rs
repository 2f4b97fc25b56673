//! Fixed-layout big-endian records (the primary interface's robot state, the real-time
//! package), written down once: each record lists its fields in wire order in a `walk`
//! over a [`Walker`], and that one list both encodes and decodes it.
//!
//! ```
//! use rtde_robot_proto::wire::{Reader, Walker, Writer};
//!
//! // A record of an i32 and two f64s, its order written once.
//! fn walk(w: &mut impl Walker, id: &mut i32, xy: &mut [f64; 2]) {
//!     w.field(id);
//!     w.fields(xy);
//! }
//! let (mut id, mut xy) = (7, [0.5, -1.0]);
//! let mut bytes = Vec::new();
//! walk(&mut Writer::new(&mut bytes), &mut id, &mut xy);
//! assert_eq!(bytes.len(), 4 + 16);
//!
//! let (mut id2, mut xy2) = (0, [0.0; 2]);
//! let mut reader = Reader::new(&bytes);
//! walk(&mut reader, &mut id2, &mut xy2);
//! assert!(reader.is_whole());
//! assert_eq!((id2, xy2), (7, [0.5, -1.0]));
//! ```

/// A value with a fixed big-endian encoding.
pub trait Be: Copy {
    /// Its size in bytes on the wire.
    const SIZE: usize;
    /// Appends its bytes.
    fn put(self, out: &mut Vec<u8>);
    /// Reads it from exactly [`SIZE`](Be::SIZE) bytes.
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! be_number {
    ($($t:ty),*) => {$(
        impl Be for $t {
            const SIZE: usize = size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_be_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut raw = [0; size_of::<$t>()];
                raw.copy_from_slice(bytes);
                <$t>::from_be_bytes(raw)
            }
        }
    )*};
}
be_number!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// One byte; any value but 0 is true, as a C++ `bool` read by a controller.
impl Be for bool {
    const SIZE: usize = 1;
    fn put(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
    fn get(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

/// Visits a record's fields in wire order: a [`Writer`] appends each, a [`Reader`]
/// fills each.
pub trait Walker {
    /// One field.
    fn field<T: Be>(&mut self, value: &mut T);

    /// Fields in a row, as an array.
    fn fields<T: Be>(&mut self, values: &mut [T]) {
        for v in values {
            self.field(v);
        }
    }

    /// `n` bytes the layout reserves, written as zeros and skipped when read (a reader
    /// takes fewer at the end of the bytes as whole).
    fn reserved(&mut self, n: usize);
}

/// Appends each field to a buffer.
#[derive(Debug)]
pub struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> Writer<'a> {
    /// A writer appending to `out`.
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        Writer { out }
    }
}

impl Walker for Writer<'_> {
    fn field<T: Be>(&mut self, value: &mut T) {
        value.put(self.out);
    }

    fn reserved(&mut self, n: usize) {
        self.out.resize(self.out.len() + n, 0);
    }
}

/// Fills each field from bytes. A field the bytes end inside keeps its value, and
/// [`is_whole`](Reader::is_whole) says so afterwards: a cut record is never a panic.
/// Reserved bytes may be missing.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    short: bool,
}

impl<'a> Reader<'a> {
    /// A reader over `bytes`.
    #[must_use]
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader {
            bytes,
            short: false,
        }
    }

    /// Whether every field read so far was there.
    #[must_use]
    pub fn is_whole(&self) -> bool {
        !self.short
    }

    /// The bytes after the fields read.
    #[must_use]
    pub fn rest(&self) -> &'a [u8] {
        self.bytes
    }
}

impl Walker for Reader<'_> {
    fn field<T: Be>(&mut self, value: &mut T) {
        match self.bytes.split_at_checked(T::SIZE) {
            Some((head, rest)) if !self.short => {
                *value = T::get(head);
                self.bytes = rest;
            }
            _ => self.short = true,
        }
    }

    /// Reserved bytes carry nothing, so a record that ends inside them is whole: a
    /// controller of a version before they were added sends it without them.
    fn reserved(&mut self, n: usize) {
        self.bytes = self.bytes.get(n..).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_number_is_big_endian_and_reads_back() {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out);
        let (mut a, mut b, mut c, mut d, mut e) = (0x0102u16, -2i32, 1.5f32, true, 3u64);
        w.field(&mut a);
        w.field(&mut b);
        w.field(&mut c);
        w.field(&mut d);
        w.reserved(2);
        w.field(&mut e);
        assert_eq!(
            out,
            [
                1, 2, // u16
                0xff, 0xff, 0xff, 0xfe, // i32 -2
                0x3f, 0xc0, 0, 0, // f32 1.5
                1, // true
                0, 0, // reserved
                0, 0, 0, 0, 0, 0, 0, 3, // u64
            ]
        );
        let (mut a2, mut b2, mut c2, mut d2, mut e2) = (0u16, 0i32, 0f32, false, 0u64);
        let mut r = Reader::new(&out);
        r.field(&mut a2);
        r.field(&mut b2);
        r.field(&mut c2);
        r.field(&mut d2);
        r.reserved(2);
        r.field(&mut e2);
        assert!(r.is_whole() && r.rest().is_empty());
        assert_eq!((a2, b2, c2, d2, e2), (a, b, c, d, e));
    }

    #[test]
    fn reserved_bytes_missing_at_the_end_leave_the_record_whole() {
        let mut r = Reader::new(&[0, 7, 0]);
        let mut a = 0u16;
        r.field(&mut a);
        r.reserved(4);
        assert!(r.is_whole() && r.rest().is_empty());
        assert_eq!(a, 7);
        // A field after them is still missing.
        r.field(&mut a);
        assert!(!r.is_whole());
    }

    #[test]
    fn a_cut_record_keeps_the_fields_it_lacks_and_says_so() {
        let mut r = Reader::new(&[0, 0, 0, 9, 1]);
        let (mut a, mut b, mut c) = (0i32, 7i32, 8u8);
        r.field(&mut a);
        r.field(&mut b);
        // Once short, a later field that would fit is not read out of place either.
        r.field(&mut c);
        assert_eq!((a, b, c), (9, 7, 8));
        assert!(!r.is_whole());
    }
}
