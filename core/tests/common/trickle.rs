//! A source that returns at most `step` bytes per read: how the property tests
//! (core/tests/*_props.rs) and the fuzz targets (fuzz/fuzz_targets/) split an input into reads
//! that cross every unit a decoder looks for.

use std::io::Read;

pub struct Trickle<'a> {
    pub data: &'a [u8],
    pub step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.data.len().min(buf.len()).min(self.step);
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}
