//! Which COPY statements fastcopy takes: [`claim`] looks at a `CopyStmt` and either returns
//! what the load needs ([`Claim`]) or why the server's COPY should run it ([`HandOver`]).
//!
//! It runs before anything is sent to the client, and it never raises: a lookup that could
//! fail (a missing or forbidden schema, a name in another database) is made with the
//! server's non-raising variants, and whatever the server would refuse is handed over so
//! that the server refuses it with its own error. The checks that raise COPY's errors in
//! COPY's order (privileges, RLS, read-only, options) run after the claim, in the load.

use crate::load::spec::{ForceList, Header, SqlOptions, WhereClause};
use pgrx::pg_sys;
use std::ffi::{CStr, c_char, c_int};
use std::fmt;

/// A statement fastcopy takes.
pub struct Claim {
    /// The relation, resolved without a lock (the load locks it as `DoCopy` does).
    pub relation: *mut pg_sys::RangeVar,
    /// `None`: STDIN.
    pub file: Option<String>,
    pub options: SqlOptions,
}

/// Why a statement goes to the server's COPY (the DEBUG1 message; with `require`, the ERROR's
/// reason, for the statements that setting is about: see [`HandOver::is_copy_from`]).
#[derive(Debug)]
pub enum HandOver {
    NotCopyFrom,
    /// A format fastcopy does not read (another extension's, such as Citus's `result`).
    Format(String),
    Program,
    Query,
    NotRemote,
    NotInstalled,
    NoRelation,
    OtherDatabase,
    RelKind(u8),
    ForeignPartition,
    OwnedBy(&'static str),
    Option(String),
    OptionValue(String),
    DuplicateOption(String),
    NotInVersion(String, u32),
    Encoding(String),
    OptionsRejected,
    ColumnNames,
}

impl fmt::Display for HandOver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandOver::NotCopyFrom => write!(f, "it is COPY TO"),
            HandOver::Format(name) => write!(f, "format \"{name}\" is not one fastcopy reads"),
            HandOver::Program => write!(f, "it reads from a program"),
            HandOver::Query => write!(f, "it copies a query"),
            HandOver::NotRemote => write!(f, "STDIN is not a remote client (single-user mode)"),
            HandOver::NotInstalled => {
                write!(f, "the fastcopy extension is not created in this database")
            }
            HandOver::NoRelation => write!(f, "the table was not found"),
            HandOver::OtherDatabase => write!(f, "the table is named with a database"),
            HandOver::RelKind(k) => {
                write!(f, "the target is not a table (relkind '{}')", *k as char)
            }
            HandOver::ForeignPartition => write!(f, "the table has a foreign partition"),
            HandOver::OwnedBy(ext) => write!(f, "the table is managed by {ext}"),
            HandOver::Option(o) => write!(f, "option \"{o}\" is not supported"),
            HandOver::OptionValue(o) => write!(f, "the value of option \"{o}\" is not supported"),
            HandOver::DuplicateOption(o) => write!(f, "option \"{o}\" is given more than once"),
            HandOver::NotInVersion(o, m) => {
                write!(f, "option \"{o}\" does not exist in PostgreSQL {m}")
            }
            HandOver::Encoding(what) => write!(f, "{what} is not supported"),
            HandOver::OptionsRejected => write!(f, "the options are invalid"),
            HandOver::ColumnNames => write!(f, "the column list is not plain names"),
        }
    }
}

impl HandOver {
    /// Whether the statement is one `fastcopy.copy_from` is about: a COPY FROM in text, CSV or
    /// binary, which `require` makes an ERROR to hand over. COPY TO and COPY FROM in another
    /// format (an extension's own) go to the server under every setting.
    pub fn is_copy_from(&self) -> bool {
        !matches!(self, HandOver::NotCopyFrom | HandOver::Format(_))
    }
}

/// Decides whether fastcopy takes `stmt`; never raises.
///
/// # Safety
/// Backend thread, in a transaction; `stmt` is a valid `CopyStmt`.
pub unsafe fn claim(stmt: &pg_sys::CopyStmt, source: *const c_char) -> Result<Claim, HandOver> {
    if !stmt.is_from {
        return Err(HandOver::NotCopyFrom);
    }
    // SAFETY: the statement's option list (NIL or DefElems), only read.
    if let Some(format) = unsafe { format_of(stmt.options) }
        && !matches!(format.as_str(), "text" | "csv" | "binary")
    {
        return Err(HandOver::Format(format));
    }
    if stmt.is_program {
        return Err(HandOver::Program);
    }
    if stmt.relation.is_null() || !stmt.query.is_null() {
        return Err(HandOver::Query);
    }
    // SAFETY: as the function's contract: backend thread, reading the statement and
    // catalogs with lookups that do not raise.
    unsafe {
        let file = if stmt.filename.is_null() {
            if pg_sys::whereToSendOutput != pg_sys::CommandDest::DestRemote {
                return Err(HandOver::NotRemote);
            }
            None
        } else {
            Some(CStr::from_ptr(stmt.filename).to_string_lossy().into_owned())
        };
        if pg_sys::get_extension_oid(c"fastcopy".as_ptr(), true) == pg_sys::InvalidOid {
            return Err(HandOver::NotInstalled);
        }
        let relid = resolve(stmt.relation)?;
        match pg_sys::get_rel_relkind(relid) as u8 {
            // a view: the load takes it if it has an INSTEAD OF INSERT row trigger, else
            // refuses it with COPY's error at COPY's point
            pg_sys::RELKIND_RELATION | pg_sys::RELKIND_VIEW => {}
            pg_sys::RELKIND_PARTITIONED_TABLE => {
                if has_foreign_partition(relid) {
                    return Err(HandOver::ForeignPartition);
                }
            }
            k => return Err(HandOver::RelKind(k)),
        }
        if owned_by_citus(relid) {
            return Err(HandOver::OwnedBy("Citus"));
        }
        if owned_by_timescaledb(relid) {
            return Err(HandOver::OwnedBy("TimescaleDB"));
        }
        let mut options = options(stmt.options)?;
        options.columns = column_names(stmt.attlist)?;
        if !stmt.whereClause.is_null() {
            options.where_clause = Some(WhereClause::Parsed {
                node: stmt.whereClause,
                source,
            });
        }
        // The option checks raise COPY's errors, but without the statement's position (the
        // server shows it for some); invalid options are left to the server.
        let major = crate::compat::server_major();
        let parsed =
            std::panic::catch_unwind(|| crate::load::spec::LoadSpec::parse(&options, major));
        let Ok(spec) = parsed else {
            return Err(HandOver::OptionsRejected);
        };
        if !spec.binary() {
            check_encoding(spec.encoding)?;
        }
        Ok(Claim {
            relation: stmt.relation,
            file,
            options,
        })
    }
}

/// The FORMAT option's value, if the list has one that is a name or a string (the first, as
/// the server reads the first before refusing a second).
///
/// # Safety
/// `list` is NIL or a List of DefElem.
unsafe fn format_of(list: *mut pg_sys::List) -> Option<String> {
    // SAFETY: as the function's contract.
    unsafe { each_option(list) }
        .find(|(name, _)| name == "format")
        // SAFETY: the DefElem's value node (or null).
        .and_then(|(_, arg)| unsafe { string_of(arg) })
}

/// The relation named by `rv`, as `RangeVarGetRelid` would find it, without raising.
///
/// # Safety
/// Backend thread, in a transaction.
unsafe fn resolve(rv: *mut pg_sys::RangeVar) -> Result<pg_sys::Oid, HandOver> {
    // SAFETY: as the function's contract; `rv` is the statement's.
    unsafe {
        let rv = &*rv;
        if !rv.catalogname.is_null() {
            return Err(HandOver::OtherDatabase);
        }
        let relid = if rv.schemaname.is_null() {
            pg_sys::RelnameGetRelid(rv.relname)
        } else {
            if CStr::from_ptr(rv.schemaname) == c"pg_temp" {
                return Err(HandOver::NoRelation);
            }
            let nsp = pg_sys::get_namespace_oid(rv.schemaname, true);
            if nsp == pg_sys::InvalidOid {
                return Err(HandOver::NoRelation);
            }
            pg_sys::get_relname_relid(rv.relname, nsp)
        };
        if relid == pg_sys::InvalidOid {
            return Err(HandOver::NoRelation);
        }
        Ok(relid)
    }
}

unsafe extern "C-unwind" {
    // catalog/pg_inherits.h (not bound by pgrx); the same declaration in 15-18.
    fn find_all_inheritors(
        parent: pg_sys::Oid,
        lockmode: pg_sys::LOCKMODE,
        numparents: *mut *mut pg_sys::List,
    ) -> *mut pg_sys::List;
}

/// A partition anywhere below `relid` is a foreign table (fastcopy's loader has no FDW path).
///
/// # Safety
/// Backend thread, in a transaction.
unsafe fn has_foreign_partition(relid: pg_sys::Oid) -> bool {
    // SAFETY: as the function's contract; without a lock, the catalog read does not raise
    // for a relation that exists.
    unsafe {
        let all = find_all_inheritors(
            relid,
            pg_sys::NoLock as pg_sys::LOCKMODE,
            std::ptr::null_mut(),
        );
        (0..pg_sys::list_length(all)).any(|i| {
            let oid = pg_sys::list_nth_oid(all, i);
            pg_sys::get_rel_relkind(oid) as u8 == pg_sys::RELKIND_FOREIGN_TABLE
        })
    }
}

/// A key of [`listed`]: a column of the catalog table, the equality function, the value.
struct Key<'a> {
    column: &'a CStr,
    proc: u32,
    value: pg_sys::Datum,
}

/// Whether the table `schema.table` exists and has a row matching every key. For the catalogs
/// of other extensions, which may not exist: read without privilege checks, as catalogs.
///
/// # Safety
/// Backend thread, in a transaction.
unsafe fn listed(schema: &CStr, table: &CStr, keys: &[Key<'_>]) -> bool {
    // SAFETY: as the function's contract; the table is looked up without raising and scanned
    // with its own column numbers.
    unsafe {
        let nsp = pg_sys::get_namespace_oid(schema.as_ptr(), true);
        if nsp == pg_sys::InvalidOid {
            return false;
        }
        let relid = pg_sys::get_relname_relid(table.as_ptr(), nsp);
        if relid == pg_sys::InvalidOid {
            return false;
        }
        let mut scankeys: Vec<pg_sys::ScanKeyData> = Vec::with_capacity(keys.len());
        for k in keys {
            let attno = pg_sys::get_attnum(relid, k.column.as_ptr());
            if attno == pg_sys::InvalidAttrNumber as i16 {
                return false;
            }
            let mut sk = pg_sys::ScanKeyData::default();
            pg_sys::ScanKeyInit(
                &mut sk,
                attno,
                pg_sys::BTEqualStrategyNumber as u16,
                pg_sys::Oid::from(k.proc),
                k.value,
            );
            scankeys.push(sk);
        }
        let rel = pg_sys::table_open(relid, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        let scan = pg_sys::systable_beginscan(
            rel,
            pg_sys::InvalidOid,
            false,
            std::ptr::null_mut(),
            scankeys.len() as c_int,
            scankeys.as_mut_ptr(),
        );
        let found = !pg_sys::systable_getnext(scan).is_null();
        pg_sys::systable_endscan(scan);
        pg_sys::table_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
        found
    }
}

/// A Citus table (listed in `pg_dist_partition`): Citus's own COPY distributes the rows.
///
/// # Safety
/// Backend thread, in a transaction.
unsafe fn owned_by_citus(relid: pg_sys::Oid) -> bool {
    let key = Key {
        column: c"logicalrelid",
        proc: pg_sys::F_OIDEQ,
        value: pg_sys::Datum::from(relid),
    };
    // SAFETY: as the function's contract.
    unsafe { listed(c"pg_catalog", c"pg_dist_partition", &[key]) }
}

/// A TimescaleDB hypertable (listed in `_timescaledb_catalog.hypertable`): its rows go to
/// chunks.
///
/// # Safety
/// Backend thread, in a transaction.
unsafe fn owned_by_timescaledb(relid: pg_sys::Oid) -> bool {
    // SAFETY: as the function's contract; the names come from the relation's catalog rows.
    unsafe {
        let relname = pg_sys::get_rel_name(relid);
        let nspname = pg_sys::get_namespace_name(pg_sys::get_rel_namespace(relid));
        if relname.is_null() || nspname.is_null() {
            return false;
        }
        let mut rel = pg_sys::NameData::default();
        let mut nsp = pg_sys::NameData::default();
        pg_sys::namestrcpy(&mut rel, relname);
        pg_sys::namestrcpy(&mut nsp, nspname);
        let keys = [
            Key {
                column: c"schema_name",
                proc: pg_sys::F_NAMEEQ,
                value: pg_sys::Datum::from(&raw mut nsp),
            },
            Key {
                column: c"table_name",
                proc: pg_sys::F_NAMEEQ,
                value: pg_sys::Datum::from(&raw mut rel),
            },
        ];
        listed(c"_timescaledb_catalog", c"hypertable", &keys)
    }
}

/// The statement's column list as names.
///
/// # Safety
/// `list` is NIL or a List of String nodes (the grammar's `columnList`).
unsafe fn column_names(list: *mut pg_sys::List) -> Result<Option<Vec<Option<String>>>, HandOver> {
    if list.is_null() {
        return Ok(None);
    }
    // SAFETY: as the function's contract.
    unsafe {
        let mut out = Vec::new();
        for i in 0..pg_sys::list_length(list) {
            let node = pg_sys::list_nth(list, i) as *mut pg_sys::Node;
            match string_of(node) {
                Some(s) if (*node).type_ == pg_sys::NodeTag::T_String => out.push(Some(s)),
                _ => return Err(HandOver::ColumnNames),
            }
        }
        Ok(Some(out))
    }
}

/// `defGetString` for the node kinds it turns into text without raising.
///
/// # Safety
/// `node` is null or a valid node.
unsafe fn string_of(node: *mut pg_sys::Node) -> Option<String> {
    if node.is_null() {
        return None;
    }
    let text = |p: *const c_char| {
        // SAFETY: the node's string is NUL-terminated.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    };
    // SAFETY: the tag says which node struct it is.
    unsafe {
        match (*node).type_ {
            pg_sys::NodeTag::T_String => Some(text((*(node as *mut pg_sys::String)).sval)),
            pg_sys::NodeTag::T_Integer => Some((*(node as *mut pg_sys::Integer)).ival.to_string()),
            pg_sys::NodeTag::T_Float => Some(text((*(node as *mut pg_sys::Float)).fval)),
            pg_sys::NodeTag::T_Boolean => Some(
                if (*(node as *mut pg_sys::Boolean)).boolval {
                    "true"
                } else {
                    "false"
                }
                .to_string(),
            ),
            _ => None,
        }
    }
}

/// `defGetBoolean` for the values it accepts (no value: true).
///
/// # Safety
/// `node` is null or a valid node.
unsafe fn boolean_of(node: *mut pg_sys::Node) -> Option<bool> {
    if node.is_null() {
        return Some(true);
    }
    // SAFETY: the tag says which node struct it is.
    unsafe {
        match (*node).type_ {
            pg_sys::NodeTag::T_Boolean => Some((*(node as *mut pg_sys::Boolean)).boolval),
            pg_sys::NodeTag::T_Integer => match (*(node as *mut pg_sys::Integer)).ival {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            },
            _ => {
                let s = string_of(node)?;
                match s.to_ascii_lowercase().as_str() {
                    "true" | "on" => Some(true),
                    "false" | "off" => Some(false),
                    _ => None,
                }
            }
        }
    }
}

/// A List of column names (FORCE_NOT_NULL / FORCE_NULL), or `*` on 17+ (older servers
/// refuse it themselves).
///
/// # Safety
/// `node` is null or a valid node.
unsafe fn names_of(node: *mut pg_sys::Node, major: u32) -> Option<ForceList> {
    // SAFETY: the tag says which node struct it is.
    unsafe {
        if node.is_null() {
            return None;
        }
        match (*node).type_ {
            pg_sys::NodeTag::T_A_Star if major >= 17 => Some(ForceList::All),
            pg_sys::NodeTag::T_List => column_names(node as *mut pg_sys::List)
                .ok()
                .flatten()
                .map(ForceList::Columns),
            _ => None,
        }
    }
}

/// `defGetCopyHeaderChoice` for the values it accepts (a Boolean, or `match`), and
/// PostgreSQL 19's integer form (`HEADER n`, n >= 0 lines skipped), which fastcopy takes on
/// 15-18, where the server refuses integers other than 0 and 1. A negative integer is handed
/// over (the server refuses it).
///
/// # Safety
/// `node` is null or a valid node.
unsafe fn header_of(node: *mut pg_sys::Node) -> Option<Header> {
    // SAFETY: as the function's contract; the tag says which node struct it is.
    unsafe {
        let is_integer = !node.is_null() && (*node).type_ == pg_sys::NodeTag::T_Integer;
        if is_integer {
            return match (*(node as *mut pg_sys::Integer)).ival {
                n if n < 0 => None,
                0 => Some(Header::Off),
                n => Some(Header::Lines(n as u64)),
            };
        }
        let text = string_of(node);
        if text
            .as_deref()
            .is_some_and(|s| s.eq_ignore_ascii_case("match"))
        {
            return Some(Header::Match);
        }
        // (19 takes an integer given as a string, `HEADER '2'`, too)
        if let Some(n) = text.and_then(|s| s.parse::<i32>().ok()) {
            return match n {
                n if n < 0 => None,
                0 => Some(Header::Off),
                n => Some(Header::Lines(n as u64)),
            };
        }
        boolean_of(node).map(|on| if on { Header::Lines(1) } else { Header::Off })
    }
}

/// Each `DefElem` of the statement's option list.
///
/// # Safety
/// `list` is NIL or a List of DefElem.
unsafe fn each_option(
    list: *mut pg_sys::List,
) -> impl Iterator<Item = (String, *mut pg_sys::Node)> {
    let n = if list.is_null() {
        0
    } else {
        // SAFETY: as the function's contract.
        unsafe { pg_sys::list_length(list) }
    };
    (0..n).map(move |i| {
        // SAFETY: i < the list's length; every element is a DefElem with a name.
        unsafe {
            let d = pg_sys::list_nth(list, i) as *mut pg_sys::DefElem;
            (
                CStr::from_ptr((*d).defname).to_string_lossy().into_owned(),
                (*d).arg,
            )
        }
    })
}

/// The options fastcopy's loader has, from the statement's list (old and new syntax give the
/// same names); anything else, a value it cannot read, or an option given twice is handed over (the server raises "conflicting or redundant options"
/// and the like itself).
///
/// # Safety
/// `list` is NIL or a List of DefElem.
unsafe fn options(list: *mut pg_sys::List) -> Result<SqlOptions, HandOver> {
    let major = crate::compat::server_major();
    let mut o = SqlOptions::default();
    let mut seen: Vec<String> = Vec::new();
    // SAFETY: as the function's contract.
    for (name, arg) in unsafe { each_option(list) } {
        if seen.contains(&name) {
            return Err(HandOver::DuplicateOption(name));
        }
        seen.push(name.clone());
        let bad = || HandOver::OptionValue(name.clone());
        // SAFETY: `arg` is the DefElem's value node (or null).
        let text = || unsafe { string_of(arg) }.ok_or_else(bad);
        match name.as_str() {
            "format" => o.format = Some(text()?),
            "delimiter" => o.delimiter = Some(text()?),
            "null" => o.null_string = Some(text()?),
            "quote" => o.quote = Some(text()?),
            "escape" => o.escape = Some(text()?),
            // SAFETY: as above.
            "header" => o.header = Some(unsafe { header_of(arg) }.ok_or_else(bad)?),
            // SAFETY: as above.
            "freeze" => o.freeze = Some(unsafe { boolean_of(arg) }.ok_or_else(bad)?),
            "default" if major >= 16 => o.default_string = Some(text()?),
            // PostgreSQL 19's set_null on every major (17 and 18 refuse the value, 15 and 16
            // the option); `ignore` as the server has it (17+)
            "on_error" => {
                let v = text()?;
                if major < 17 && !v.eq_ignore_ascii_case("set_null") {
                    return Err(HandOver::NotInVersion(name, major));
                }
                o.on_error = Some(v);
            }
            // (15 and 16: only with set_null, checked after the loop)
            "log_verbosity" => {
                let v = text()?;
                if major < 18 && v.eq_ignore_ascii_case("silent") {
                    return Err(HandOver::NotInVersion("log_verbosity silent".into(), major));
                }
                o.log_verbosity = Some(v);
            }
            "reject_limit" if major >= 18 => {
                o.reject_limit = Some(text()?.parse().map_err(|_| bad())?);
            }
            "force_not_null" => {
                // SAFETY: as above.
                o.force_not_null = Some(unsafe { names_of(arg, major) }.ok_or_else(bad)?)
            }
            // SAFETY: as above.
            "force_null" => o.force_null = Some(unsafe { names_of(arg, major) }.ok_or_else(bad)?),
            "encoding" => o.encoding = Some(text()?),
            // fastcopy's own: the rejects table
            "rejects" => o.rejects = Some(text()?),
            "reject_ratio" => o.reject_ratio = Some(text()?.parse().map_err(|_| bad())?),
            "default" | "reject_limit" => {
                return Err(HandOver::NotInVersion(name, major));
            }
            _ => return Err(HandOver::Option(name)),
        }
    }
    let set_null = o
        .on_error
        .as_deref()
        .is_some_and(|v| v.eq_ignore_ascii_case("set_null"));
    if major < 17 && o.log_verbosity.is_some() && !set_null {
        return Err(HandOver::NotInVersion("log_verbosity".into(), major));
    }
    Ok(o)
}

/// The input's encoding and the database's must be ones fastcopy reads (it converts between
/// any two the server converts, `load::input::encoding`): COPY reads a file or STDIN in ENCODING,
/// else in client_encoding.
fn check_encoding(option: Option<std::ffi::c_int>) -> Result<(), HandOver> {
    let (input, database) = crate::load::input::encoding::encodings(option);
    match crate::load::input::encoding::unsupported(input, database) {
        Some(why) => Err(HandOver::Encoding(why)),
        None => Ok(()),
    }
}
