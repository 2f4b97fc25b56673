//! A stream cut at the points the fuzzer chose, as reads would hand it over.

/// `stream` in pieces, cut at each of `splits` (taken modulo the stream's length and put
/// in order); the pieces join back to the stream.
pub fn pieces<'a>(stream: &'a [u8], splits: &[u16]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = splits
        .iter()
        .map(|&s| usize::from(s) % (stream.len() + 1))
        .collect();
    cuts.sort_unstable();
    cuts.push(stream.len());
    let mut pos = 0;
    let mut out = Vec::with_capacity(cuts.len());
    for cut in cuts {
        out.push(&stream[pos..cut]);
        pos = cut;
    }
    out
}
