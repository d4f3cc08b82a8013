//! Writes a btree index bottom-up from its leaf tuples in (key, heap TID) order, into the
//! index's new, empty file: the leaf level left to right, each page filled to the index's
//! fillfactor, then one level of downlinks above the other up to the root, then the metapage,
//! as the server's sorted build lays an index out (nbtree's README, "Building an index by
//! sorting").
//!
//! What makes the pages valid btree pages, page by page:
//! - every page but each level's rightmost keeps its high key at `P_HIKEY`; a leaf page's is
//!   the server's suffix-truncated pivot between its last tuple and the next page's first
//!   (`_bt_truncate`), an internal page's the pivot it ends with;
//! - the first page of each level has the "minus infinity" low key, every later page's low
//!   key is the previous page's high key; a page's low key, pointing to it, is its downlink in
//!   the level above, where the first downlink of each page is truncated to no attributes;
//! - the rightmost page of each level has no high key (its items slide left one slot);
//! - sibling links, levels, the leaf and root flags, and the metapage
//!   (`_bt_initmetapage`: root, its level, whether every key column is equal-image).
//!
//! Pages are written past shared buffers, as the server's build writes them, by the
//! version's mechanism (the only version difference here): 17+'s bulk writer
//! (`smgr_bulk_*`: full-page WAL records of up to 32 pages, none where the WAL of a new file
//! is skipped, the sync registered or done); on 15 and 16 `smgrextend`/`smgrwrite`, each
//! page logged by `log_newpage` when the index needs WAL, and an immediate sync at the end
//! then (a checkpoint between a page's record and its write would otherwise lose it).

use super::heap_layout::maxalign;
use pgrx::pg_sys;
use std::ffi::c_void;

/// `P_HIKEY` and `P_FIRSTKEY` (nbtree.h).
const P_HIKEY: u16 = 1;
const P_FIRSTKEY: u16 = 2;
/// `BTP_LEAF` and `BTP_ROOT` (nbtree.h).
const BTP_LEAF: u16 = 1 << 0;
const BTP_ROOT: u16 = 1 << 1;
/// `INDEX_ALT_TID_MASK` (nbtree.h: the AM's reserved `t_info` bit marks a pivot tuple) and
/// `INDEX_SIZE_MASK` (itup.h).
const INDEX_ALT_TID_MASK: u16 = 0x2000;
const INDEX_SIZE_MASK: u16 = 0x1FFF;
/// `BTREE_NONLEAF_FILLFACTOR` and `BTREE_DEFAULT_FILLFACTOR` (nbtree.h).
const NONLEAF_FILLFACTOR: usize = 70;
const DEFAULT_FILLFACTOR: i32 = 90;
const BLCKSZ: usize = pg_sys::BLCKSZ as usize;
/// `sizeof(BTPageOpaqueData)`: prev, next (4 each), level (4), flags and cycle id (2 each).
const OPAQUE_SIZE: usize = 16;

unsafe extern "C-unwind" {
    // access/nbtree.h, the same in 15-18
    fn _bt_pageinit(page: pg_sys::Page, size: pg_sys::Size);
    fn _bt_initmetapage(
        page: pg_sys::Page,
        rootbknum: pg_sys::BlockNumber,
        level: u32,
        allequalimage: bool,
    );
    fn _bt_truncate(
        rel: pg_sys::Relation,
        lastleft: pg_sys::IndexTuple,
        firstright: pg_sys::IndexTuple,
        itup_key: *mut c_void,
    ) -> pg_sys::IndexTuple;
    fn _bt_mkscankey(rel: pg_sys::Relation, itup: pg_sys::IndexTuple) -> *mut c_void;
    // storage/bulk_write.h, 17+
    #[cfg(any(feature = "pg17", feature = "pg18"))]
    fn smgr_bulk_start_rel(rel: pg_sys::Relation, forknum: pg_sys::ForkNumber::Type)
    -> *mut c_void;
    #[cfg(any(feature = "pg17", feature = "pg18"))]
    fn smgr_bulk_get_buf(state: *mut c_void) -> *mut c_void;
    #[cfg(any(feature = "pg17", feature = "pg18"))]
    fn smgr_bulk_write(
        state: *mut c_void,
        blocknum: pg_sys::BlockNumber,
        buf: *mut c_void,
        page_std: bool,
    );
    #[cfg(any(feature = "pg17", feature = "pg18"))]
    fn smgr_bulk_finish(state: *mut c_void);
}

/// `BTPageOpaqueData` (nbtree.h, the same in 15-18; pgrx does not bind it): the special
/// space of every btree page.
#[repr(C)]
struct BTPageOpaque {
    btpo_prev: pg_sys::BlockNumber,
    btpo_next: pg_sys::BlockNumber,
    btpo_level: u32,
    btpo_flags: u16,
    btpo_cycleid: u16,
}
const _: () = assert!(size_of::<BTPageOpaque>() == OPAQUE_SIZE);

/// Where finished pages go: the version's way of writing a new index file.
struct Sink {
    #[cfg(any(feature = "pg17", feature = "pg18"))]
    bulk: *mut c_void,
    #[cfg(not(any(feature = "pg17", feature = "pg18")))]
    index: pg_sys::Relation,
    /// Blocks written so far (15/16: the file's length).
    #[cfg(not(any(feature = "pg17", feature = "pg18")))]
    written: pg_sys::BlockNumber,
    #[cfg(not(any(feature = "pg17", feature = "pg18")))]
    wal: bool,
}

impl Sink {
    /// # Safety
    /// `index` is open, its main fork new and empty; backend thread.
    unsafe fn new(index: pg_sys::Relation) -> Sink {
        // SAFETY: as the function's contract.
        unsafe {
            #[cfg(any(feature = "pg17", feature = "pg18"))]
            {
                Sink {
                    bulk: pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| {
                        smgr_bulk_start_rel(index, pg_sys::ForkNumber::MAIN_FORKNUM)
                    }),
                }
            }
            #[cfg(not(any(feature = "pg17", feature = "pg18")))]
            {
                // RelationNeedsWAL for a file made in this transaction: a permanent index
                // under wal_level replica or logical
                let permanent =
                    (*(*index).rd_rel).relpersistence as u8 == pg_sys::RELPERSISTENCE_PERMANENT;
                Sink {
                    index,
                    written: 0,
                    wal: permanent
                        && pg_sys::wal_level >= pg_sys::WalLevel::WAL_LEVEL_REPLICA as i32,
                }
            }
        }
    }

    /// Writes the BLCKSZ bytes at `page` as block `blkno`.
    ///
    /// # Safety
    /// `page` is a formatted page of BLCKSZ bytes; backend thread.
    unsafe fn write(&mut self, blkno: pg_sys::BlockNumber, page: *mut u8) {
        // SAFETY: as the function's contract; the bulk writer's buffer is BLCKSZ bytes.
        unsafe {
            #[cfg(any(feature = "pg17", feature = "pg18"))]
            {
                let buf = pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| smgr_bulk_get_buf(self.bulk));
                std::ptr::copy_nonoverlapping(page, buf.cast::<u8>(), BLCKSZ);
                pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| {
                    smgr_bulk_write(self.bulk, blkno, buf, true)
                });
            }
            #[cfg(not(any(feature = "pg17", feature = "pg18")))]
            {
                let smgr = pg_sys::RelationGetSmgr(self.index);
                if self.wal {
                    crate::compat::log_new_page(self.index, blkno, page.cast());
                }
                // blocks allocated earlier and written later (the levels above, the
                // metapage): zeros until then
                let zeros = [0u8; BLCKSZ];
                while blkno > self.written {
                    pg_sys::smgrextend(
                        smgr,
                        pg_sys::ForkNumber::MAIN_FORKNUM,
                        self.written,
                        zeros.as_ptr() as _,
                        true,
                    );
                    self.written += 1;
                }
                pg_sys::PageSetChecksumInplace(page.cast(), blkno);
                if blkno == self.written {
                    pg_sys::smgrextend(
                        smgr,
                        pg_sys::ForkNumber::MAIN_FORKNUM,
                        blkno,
                        page as _,
                        true,
                    );
                    self.written += 1;
                } else {
                    pg_sys::smgrwrite(
                        smgr,
                        pg_sys::ForkNumber::MAIN_FORKNUM,
                        blkno,
                        page as _,
                        true,
                    );
                }
            }
        }
    }

    /// # Safety
    /// After the last write; backend thread.
    unsafe fn finish(self) {
        // SAFETY: as the function's contract.
        unsafe {
            #[cfg(any(feature = "pg17", feature = "pg18"))]
            pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| smgr_bulk_finish(self.bulk));
            #[cfg(not(any(feature = "pg17", feature = "pg18")))]
            if self.wal {
                pg_sys::smgrimmedsync(
                    pg_sys::RelationGetSmgr(self.index),
                    pg_sys::ForkNumber::MAIN_FORKNUM,
                );
            }
        }
    }
}

/// The page being filled on one level.
struct Level {
    page: *mut u8,
    blkno: pg_sys::BlockNumber,
    /// The offset of the page's last item (`P_HIKEY` while it has none).
    last_off: u16,
    /// The page's low key, its downlink in the level above once the page is done.
    low_key: Vec<u8>,
}

/// A bottom-up btree writer (see the module's comment).
pub struct BtreeWriter {
    index: pg_sys::Relation,
    sink: Sink,
    levels: Vec<Level>,
    next_blkno: pg_sys::BlockNumber,
    scan_key: *mut c_void,
    /// Free space a page keeps: the leaf fillfactor's, the levels above's.
    leaf_keep: usize,
    upper_keep: usize,
}

impl BtreeWriter {
    /// # Safety
    /// `index` is an open btree index whose main fork is new and empty (its old file
    /// replaced in this transaction); backend thread.
    pub unsafe fn new(index: pg_sys::Relation) -> BtreeWriter {
        // SAFETY: as the function's contract. `rd_options` of a btree index is its
        // BTOptions (varlena header, then `int fillfactor`), the same in 15-18.
        unsafe {
            let options = (*index).rd_options;
            let fillfactor = if options.is_null() {
                DEFAULT_FILLFACTOR
            } else {
                *(options as *const i32).add(1)
            };
            BtreeWriter {
                index,
                sink: Sink::new(index),
                levels: Vec::new(),
                next_blkno: 1,
                scan_key: pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| {
                    _bt_mkscankey(index, std::ptr::null_mut())
                }),
                leaf_keep: BLCKSZ * (100 - fillfactor as usize) / 100,
                upper_keep: BLCKSZ * (100 - NONLEAF_FILLFACTOR) / 100,
            }
        }
    }

    /// Adds the next leaf tuple (an index tuple of the index's key columns, its `t_tid` the
    /// heap TID), in (key, TID) order.
    ///
    /// # Safety
    /// `tuple` is a well-formed leaf index tuple of the index, not below the one before.
    pub unsafe fn add_leaf(&mut self, tuple: &[u8]) {
        // SAFETY: as the function's contract.
        unsafe { self.add(0, tuple) }
    }

    /// A new page for `level`, formatted as nbtree's pages are, its high key slot reserved.
    fn new_page(level: u32) -> *mut u8 {
        // SAFETY: a BLCKSZ allocation in the current memory context, formatted by nbtree's
        // own page initialization; the opaque area is the page's last OPAQUE_SIZE bytes.
        unsafe {
            let page = pg_sys::palloc(BLCKSZ).cast::<u8>();
            pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| _bt_pageinit(page.cast(), BLCKSZ));
            let opaque = opaque(page);
            (*opaque).btpo_prev = 0;
            (*opaque).btpo_next = 0;
            (*opaque).btpo_level = level;
            (*opaque).btpo_flags = if level == 0 { BTP_LEAF } else { 0 };
            (*opaque).btpo_cycleid = 0;
            // the line pointer of the high key, allocated now
            let header = page.cast::<pg_sys::PageHeaderData>();
            (*header).pd_lower += size_of::<pg_sys::ItemIdData>() as u16;
            page
        }
    }

    fn alloc_block(&mut self) -> pg_sys::BlockNumber {
        let b = self.next_blkno;
        self.next_blkno += 1;
        b
    }

    /// Adds `tuple` to the page being filled on `level`; when it does not fit (or the page is
    /// full to its fillfactor), finishes that page first: its last item moves to a new page,
    /// its high key takes that item's place, and its low key goes up a level as its downlink.
    ///
    /// # Safety
    /// As `add_leaf` for level 0; a pivot tuple with its downlink set above.
    unsafe fn add(&mut self, level: usize, tuple: &[u8]) {
        // SAFETY: the pages are this writer's BLCKSZ allocations; the item pointers and the
        // tuples read are on them (offsets from the page's own line pointers).
        unsafe {
            if self.levels.len() == level {
                let blkno = self.alloc_block();
                self.levels.push(Level {
                    page: Self::new_page(level as u32),
                    blkno,
                    last_off: P_HIKEY,
                    low_key: Vec::new(),
                });
            }
            let leaf = level == 0;
            let size = maxalign(tuple.len());
            let (page, last_off) = (self.levels[level].page, self.levels[level].last_off);
            let free = free_space(page);
            let keep = if leaf {
                self.leaf_keep
            } else {
                self.upper_keep
            };
            // (a leaf's high key may be one heap TID longer than the item it replaces)
            let extra = if leaf {
                maxalign(size_of::<pg_sys::ItemPointerData>())
            } else {
                0
            };
            if free < size + extra || (free < keep && last_off > P_FIRSTKEY) {
                self.finish_page(level);
            }
            let lv = &mut self.levels[level];
            if lv.last_off == P_HIKEY {
                // the first item of the level: its page's low key is minus infinity
                lv.low_key = minus_infinity(0);
            }
            lv.last_off += 1;
            let first_downlink = !leaf && lv.last_off == P_FIRSTKEY;
            add_item(lv.page, tuple, lv.last_off, first_downlink);
        }
    }

    /// Ends the full page of `level` and starts the next (see `add`).
    ///
    /// # Safety
    /// The level's page has at least two items.
    unsafe fn finish_page(&mut self, level: usize) {
        // SAFETY: as `add`.
        unsafe {
            let leaf = level == 0;
            let (opage, oblkno, last_off) = {
                let lv = &self.levels[level];
                (lv.page, lv.blkno, lv.last_off)
            };
            let npage = Self::new_page(level as u32);
            let nblkno = self.alloc_block();
            // the old page's last item becomes the new page's first
            let last_id = item_id(opage, last_off);
            let last = item(opage, last_id);
            add_item(npage, last, P_FIRSTKEY, !leaf);
            // its line pointer becomes the old page's high key
            *item_id(opage, P_HIKEY) = *last_id;
            (*opage.cast::<pg_sys::PageHeaderData>()).pd_lower -=
                size_of::<pg_sys::ItemIdData>() as u16;
            if leaf {
                // the high key: the shortest pivot above the page's last item and not above
                // the next page's first
                let lastleft = item(opage, item_id(opage, last_off - 1));
                let firstright = item(opage, item_id(opage, P_HIKEY));
                let (index, key) = (self.index, self.scan_key);
                let truncated = pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| {
                    _bt_truncate(
                        index,
                        lastleft.as_ptr() as pg_sys::IndexTuple,
                        firstright.as_ptr() as pg_sys::IndexTuple,
                        key,
                    )
                });
                let tsize = (*truncated).t_info & INDEX_SIZE_MASK;
                if !pg_sys::PageIndexTupleOverwrite(
                    opage.cast(),
                    P_HIKEY,
                    truncated.cast(),
                    tsize as usize,
                ) {
                    pgrx::error!("fastcopy: failed to add a high key to an index page");
                }
                pg_sys::pfree(truncated.cast());
            }
            let high_key = item(opage, item_id(opage, P_HIKEY)).to_vec();
            // the old page's downlink, from its low key, one level up
            let mut downlink = std::mem::replace(&mut self.levels[level].low_key, high_key);
            set_downlink(&mut downlink, oblkno);
            self.add(level + 1, &downlink);
            (*opaque(opage)).btpo_next = nblkno;
            (*opaque(npage)).btpo_prev = oblkno;
            self.sink.write(oblkno, opage);
            pg_sys::pfree(opage.cast());
            let lv = &mut self.levels[level];
            lv.page = npage;
            lv.blkno = nblkno;
            lv.last_off = P_FIRSTKEY;
        }
    }

    /// Ends every level's last page (its downlink into the level above, the top one the
    /// root), then writes the metapage.
    ///
    /// # Safety
    /// After the last `add_leaf`; backend thread.
    pub unsafe fn finish(mut self, allequalimage: bool) {
        // SAFETY: as `add`.
        unsafe {
            let (mut root, mut root_level) = (0, 0);
            let mut level = 0;
            // (a downlink added above may start a level above: the length is read each time)
            while level < self.levels.len() {
                let (page, blkno) = (self.levels[level].page, self.levels[level].blkno);
                if level + 1 == self.levels.len() {
                    (*opaque(page)).btpo_flags |= BTP_ROOT;
                    root = blkno;
                    root_level = level as u32;
                } else {
                    let mut downlink = std::mem::take(&mut self.levels[level].low_key);
                    set_downlink(&mut downlink, blkno);
                    self.add(level + 1, &downlink);
                }
                slide_left(page);
                self.sink.write(blkno, page);
                pg_sys::pfree(page.cast());
                level += 1;
            }
            let meta = pg_sys::palloc(BLCKSZ).cast::<u8>();
            pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| {
                _bt_initmetapage(meta.cast(), root, root_level, allequalimage)
            });
            self.sink.write(0, meta);
            pg_sys::pfree(meta.cast());
            self.sink.finish();
        }
    }
}

/// The opaque area of a btree page.
///
/// # Safety
/// `page` is a BLCKSZ btree page.
unsafe fn opaque(page: *mut u8) -> *mut BTPageOpaque {
    // SAFETY: as the function's contract: the special space is the page's last bytes.
    unsafe { page.add(BLCKSZ - OPAQUE_SIZE).cast() }
}

/// The line pointer of item `off` (1-based).
///
/// # Safety
/// `page` is a formatted page with a line pointer at `off`.
unsafe fn item_id(page: *mut u8, off: u16) -> *mut pg_sys::ItemIdData {
    // SAFETY: as the function's contract: line pointers follow the page header.
    unsafe {
        page.add(size_of::<pg_sys::PageHeaderData>())
            .cast::<pg_sys::ItemIdData>()
            .add(off as usize - 1)
    }
}

/// The bytes of the item `id` points to.
///
/// # Safety
/// `id` is a used line pointer of `page`.
unsafe fn item<'a>(page: *mut u8, id: *const pg_sys::ItemIdData) -> &'a [u8] {
    // SAFETY: as the function's contract: lp_off and lp_len lie within the page.
    unsafe {
        let id = &*id;
        std::slice::from_raw_parts(page.add(id.lp_off() as usize), id.lp_len() as usize)
    }
}

/// Adds `tuple` as the page's next item, at `off`, as `PageAddItem` appends one (its line
/// pointer after the last, its bytes below the lowest); `first_downlink`: as the first item
/// of an internal page, truncated to its downlink (no key attributes: minus infinity).
///
/// # Safety
/// `page` is a formatted page of this writer whose last line pointer is `off - 1`.
unsafe fn add_item(page: *mut u8, tuple: &[u8], off: u16, first_downlink: bool) {
    let trunc;
    let bytes = if first_downlink {
        trunc = truncated_downlink(tuple);
        &trunc[..]
    } else {
        tuple
    };
    // SAFETY: as the function's contract: the header's bounds say where the free space is,
    // and the item goes inside it (checked).
    unsafe {
        let header = page.cast::<pg_sys::PageHeaderData>();
        let (lower, upper) = ((*header).pd_lower as usize, (*header).pd_upper as usize);
        let lp = size_of::<pg_sys::ItemIdData>();
        let at = upper.wrapping_sub(maxalign(bytes.len()));
        let next = (lower - size_of::<pg_sys::PageHeaderData>()) / lp + 1;
        if next != off as usize || upper < maxalign(bytes.len()) || at < lower + lp {
            pgrx::error!("fastcopy: failed to add an item to an index page");
        }
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), page.add(at), bytes.len());
        let id = &mut *item_id(page, off);
        id.set_lp_off(at as u32);
        id.set_lp_flags(pg_sys::LP_NORMAL);
        id.set_lp_len(bytes.len() as u32);
        (*header).pd_lower = (lower + lp) as u16;
        (*header).pd_upper = at as u16;
    }
}

/// `PageGetFreeSpace`: the room between the line pointers and the items, less one line
/// pointer.
///
/// # Safety
/// `page` is a formatted page.
unsafe fn free_space(page: *mut u8) -> usize {
    // SAFETY: as the function's contract.
    unsafe {
        let header = page.cast::<pg_sys::PageHeaderData>();
        let space = ((*header).pd_upper as usize).saturating_sub((*header).pd_lower as usize);
        space.saturating_sub(size_of::<pg_sys::ItemIdData>())
    }
}

/// A pivot tuple with no key attributes (`t_info` its bare size and the pivot bit, the key
/// count 0 in its TID's offset), pointing to block `downlink`.
fn minus_infinity(downlink: pg_sys::BlockNumber) -> Vec<u8> {
    // (the TID's offset, the key count, stays 0)
    let mut t = vec![0u8; 8];
    set_downlink(&mut t, downlink);
    t[6..8].copy_from_slice(&(8 | INDEX_ALT_TID_MASK).to_ne_bytes());
    t
}

/// `tuple`'s downlink as a pivot with no key attributes.
fn truncated_downlink(tuple: &[u8]) -> Vec<u8> {
    let mut t = minus_infinity(0);
    t[0..4].copy_from_slice(&tuple[0..4]);
    t
}

/// Sets the block of a pivot tuple's TID, its downlink (`BTreeTupleSetDownLink`).
fn set_downlink(tuple: &mut [u8], blkno: pg_sys::BlockNumber) {
    tuple[0..2].copy_from_slice(&((blkno >> 16) as u16).to_ne_bytes());
    tuple[2..4].copy_from_slice(&((blkno & 0xFFFF) as u16).to_ne_bytes());
}

/// Removes the (unused) high key slot of a level's rightmost page: its items move one slot
/// left (`_bt_slideleft`).
///
/// # Safety
/// `page` is a btree page of this writer.
unsafe fn slide_left(page: *mut u8) {
    // SAFETY: as the function's contract: the line pointers between the header and
    // pd_lower.
    unsafe {
        let header = page.cast::<pg_sys::PageHeaderData>();
        let lp = size_of::<pg_sys::ItemIdData>();
        let n = ((*header).pd_lower as usize - size_of::<pg_sys::PageHeaderData>()) / lp;
        if n <= 1 {
            // no item: nothing to slide (an empty page keeps no line pointer)
            (*header).pd_lower = size_of::<pg_sys::PageHeaderData>() as u16;
            return;
        }
        let first = item_id(page, P_HIKEY);
        std::ptr::copy(first.add(1), first, n - 1);
        (*header).pd_lower -= lp as u16;
    }
}
