//! `ALTER TABLE ... SET TBLPROPERTIES` / `UNSET TBLPROPERTIES`: a new metadata version with the
//! changed properties and no new snapshot.
//!
//! Values geoberg reads are checked before anything is written, so a table never holds a
//! property that makes its next write fail: the whole property set is parsed as
//! [`TableProperties`] and as the metrics modes, and a metrics key must name a column. A
//! property that was already unusable before the change does not block changing other keys.
//! Lost races are retried under `commit.retry.*`, re-applying the change on the newer metadata.

use std::collections::{BTreeMap, HashMap};

use iceberg::spec::{FormatVersion, TableMetadata, TableMetadataBuilder};

use crate::bridge::GeoFields;
use crate::error::{Error, Result};
use crate::metrics::METRICS_COLUMN_PREFIX;
use crate::properties::{
    HILBERT_CELL_PROPERTY, LEGACY_GEOMETRY_PROPERTY, SORT_ORDER_PROPERTY, TableProperties,
};
use crate::snapshot::{MetadataChange, commit_metadata};
use crate::table::Table;

/// The property Iceberg reads the format version from; set in metadata, never stored.
const FORMAT_VERSION: &str = "format-version";

/// Keys Iceberg derives from the metadata and never stores (besides `format-version`).
const RESERVED: [&str; 8] = [
    "uuid",
    "snapshot-count",
    "current-snapshot-id",
    "current-snapshot-summary",
    "current-snapshot-timestamp-ms",
    "current-schema",
    "default-partition-spec",
    "default-sort-order",
];

/// Keys geoberg writes when it creates a table, describing how columns are stored: changing
/// them by hand would make existing files read differently.
const MANAGED: [&str; 2] = [LEGACY_GEOMETRY_PROPERTY, HILBERT_CELL_PROPERTY];

/// One property change, re-applied on each attempt's metadata.
struct PropertyChange {
    set: BTreeMap<String, String>,
    unset: Vec<String>,
    if_exists: bool,
}

impl Table {
    /// `ALTER TABLE t SET TBLPROPERTIES ('k' = 'v', ...)`: sets the properties (replacing
    /// existing values) in a new metadata version, without a new snapshot, and returns the
    /// table at that version.
    ///
    /// Values geoberg reads are validated first ([`Error::InvalidProperty`] names the key, the
    /// value and what is accepted; nothing is written then). `format-version` may be given
    /// with the table's current version (no change); lowering it is refused, and raising it is
    /// [`Error::Unsupported`] (geoberg does not upgrade tables in place). Setting nothing new
    /// commits nothing and returns the table as it is.
    pub fn set_properties<K, V>(
        &self,
        properties: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Table>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let mut set = BTreeMap::new();
        for (k, v) in properties {
            set.insert(k.into(), v.into());
        }
        self.change_properties(&PropertyChange {
            set,
            unset: Vec::new(),
            if_exists: false,
        })
    }

    /// `ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)`: removes the properties in a
    /// new metadata version, without a new snapshot.
    ///
    /// A key the table does not have is [`Error::NoSuchProperty`] unless `if_exists` (Spark's
    /// behaviour); reserved keys (`format-version`, `uuid`, ...) and the keys geoberg manages
    /// are refused. Removing nothing commits nothing.
    pub fn unset_properties<K: Into<String>>(
        &self,
        keys: impl IntoIterator<Item = K>,
        if_exists: bool,
    ) -> Result<Table> {
        let mut unset: Vec<String> = Vec::new();
        for k in keys {
            let k = k.into();
            if !unset.contains(&k) {
                unset.push(k);
            }
        }
        self.change_properties(&PropertyChange {
            set: BTreeMap::new(),
            unset,
            if_exists,
        })
    }

    /// Commits `change` through the commit driver, which re-applies it on the latest metadata
    /// after a lost race.
    fn change_properties(&self, change: &PropertyChange) -> Result<Table> {
        commit_metadata(self, change)
    }
}

impl MetadataChange for PropertyChange {
    fn apply(&self, current: &Table) -> Result<Option<(TableMetadata, GeoFields)>> {
        let Some(next) = self.decide(current)? else {
            return Ok(None);
        };
        let sort_order_changed = next.set.contains_key(SORT_ORDER_PROPERTY)
            || next.removed.iter().any(|k| k == SORT_ORDER_PROPERTY);
        let sort_order = next.set.get(SORT_ORDER_PROPERTY).cloned();
        let mut builder = TableMetadataBuilder::new_from_metadata(
            current.metadata().clone(),
            Some(current.metadata_location().to_owned()),
        )
        .remove_properties(&next.removed)?
        .set_properties(next.set)?;
        // Iceberg readers see a column `write.sort-order` as the table's sort order.
        if sort_order_changed {
            builder = crate::sort_order::with_default_sort_order(
                builder,
                current.metadata().current_schema(),
                sort_order.as_deref(),
            )?;
        }
        let metadata = builder.build()?.metadata;
        Ok(Some((metadata, current.geo_fields().clone())))
    }
}

/// What one attempt writes: the properties to set and the keys to remove.
struct Applied {
    set: HashMap<String, String>,
    removed: Vec<String>,
}

impl PropertyChange {
    /// The change on `table`'s metadata, validated; `None` when it changes nothing.
    fn decide(&self, table: &Table) -> Result<Option<Applied>> {
        let current = table.metadata().properties();
        let mut set = HashMap::new();
        for (key, value) in &self.set {
            if key == FORMAT_VERSION {
                check_format_version(table, value)?;
                continue;
            }
            refuse_reserved(key, Some(value))?;
            if current.get(key) != Some(value) {
                set.insert(key.clone(), value.clone());
            }
        }
        let mut removed = Vec::new();
        for key in &self.unset {
            refuse_reserved(key, None)?;
            if current.contains_key(key) {
                removed.push(key.clone());
            } else if !self.if_exists {
                let mut available: Vec<&str> = current.keys().map(String::as_str).collect();
                available.sort_unstable();
                return Err(Error::NoSuchProperty {
                    table: table.ident().to_string(),
                    key: key.clone(),
                    available: if available.is_empty() {
                        "<none>".into()
                    } else {
                        available.join(", ")
                    },
                });
            }
        }
        if set.is_empty() && removed.is_empty() {
            return Ok(None);
        }
        let mut next = current.clone();
        for key in &removed {
            next.remove(key);
        }
        next.extend(set.clone());
        validate(table, &next, &set)?;
        Ok(Some(Applied { set, removed }))
    }
}

/// `format-version` may only restate the table's version.
fn check_format_version(table: &Table, value: &str) -> Result<()> {
    let current = match table.metadata().format_version() {
        FormatVersion::V1 => 1,
        FormatVersion::V2 => 2,
        FormatVersion::V3 => 3,
    };
    let asked: u8 = match value.trim().parse() {
        Ok(v @ 1..=3) => v,
        _ => {
            return Err(Error::InvalidProperty {
                key: FORMAT_VERSION.into(),
                value: value.into(),
                reason: format!("expected 1, 2 or 3 (the table is at {current})"),
            });
        }
    };
    match asked.cmp(&current) {
        std::cmp::Ordering::Equal => Ok(()),
        std::cmp::Ordering::Less => Err(Error::InvalidProperty {
            key: FORMAT_VERSION.into(),
            value: value.into(),
            reason: format!(
                "the table is at format version {current} and a format version can only go up; \
                 leave format-version out"
            ),
        }),
        std::cmp::Ordering::Greater => Err(Error::Unsupported {
            what: format!(
                "raising format-version of table {} from {current} to {asked}",
                table.ident()
            ),
            fix: format!(
                "geoberg does not upgrade tables in place; create a new table with \
                 TBLPROPERTIES ('format-version' = '{asked}') and copy the rows into it"
            ),
        }),
    }
}

/// Reserved and geoberg-managed keys cannot be set (`value` given) or unset.
fn refuse_reserved(key: &str, value: Option<&str>) -> Result<()> {
    let action = if value.is_some() { "set" } else { "unset" };
    let reason = if key == FORMAT_VERSION || RESERVED.contains(&key) {
        format!(
            "{key} is reserved: Iceberg derives it from the table metadata and never stores it, \
             so it cannot be {action}; leave it out"
        )
    } else if MANAGED.contains(&key) {
        format!(
            "{key} is written by geoberg when the table is created and says how existing files \
             are read, so it cannot be {action} by hand; leave it out"
        )
    } else {
        return Ok(());
    };
    Err(Error::InvalidProperty {
        key: key.into(),
        value: value.unwrap_or("<unset>").into(),
        reason,
    })
}

/// Checks that `next` (the properties after the change) parses, blaming only the keys being
/// `set` or whose removal made another key invalid: a key that was already unusable and is not
/// touched is left out of the check.
fn validate(
    table: &Table,
    next: &HashMap<String, String>,
    set: &HashMap<String, String>,
) -> Result<()> {
    let columns: Vec<String> =
        crate::data_file::metric_leaves(table.metadata().current_schema().as_struct())
            .into_iter()
            .map(|l| l.name)
            .collect();
    for (key, value) in set {
        if let Some(column) = key.strip_prefix(METRICS_COLUMN_PREFIX)
            && !columns.iter().any(|c| c == column)
        {
            return Err(Error::InvalidProperty {
                key: key.clone(),
                value: value.clone(),
                reason: format!(
                    "table {} has no column {column:?} (nested fields are dotted, as s.a); its \
                     columns are: {}",
                    table.ident(),
                    columns.join(", ")
                ),
            });
        }
    }
    if let Some(value) = set.get(SORT_ORDER_PROPERTY) {
        let order = geoberg_sql::parse_sort_order(value).map_err(|e| Error::InvalidProperty {
            key: SORT_ORDER_PROPERTY.into(),
            value: value.clone(),
            reason: format!("{e}; write one of: {}", geoberg_sql::SORT_ORDER_FORMS),
        })?;
        crate::sort_order::check_sort_order(table, &order).map_err(|e| Error::InvalidProperty {
            key: SORT_ORDER_PROPERTY.into(),
            value: value.clone(),
            reason: e.to_string(),
        })?;
    }
    let before = table.metadata().properties();
    let mut probe = next.clone();
    loop {
        let checked = TableProperties::parse(&probe)
            .and_then(|_| table.metrics_config_with(&probe).map(|_| ()));
        match checked {
            Ok(()) => return Ok(()),
            // A key left as it was whose value was already unusable: not this change's doing.
            Err(Error::InvalidProperty { key, .. })
                if !set.contains_key(&key)
                    && probe.contains_key(&key)
                    && before.get(&key) == probe.get(&key)
                    && already_invalid(table, before, &key) =>
            {
                probe.remove(&key);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Whether `key` is unusable in the properties before the change too.
fn already_invalid(table: &Table, before: &HashMap<String, String>, key: &str) -> bool {
    let mut probe = before.clone();
    loop {
        let checked = TableProperties::parse(&probe)
            .and_then(|_| table.metrics_config_with(&probe).map(|_| ()));
        match checked {
            Ok(()) => return false,
            Err(Error::InvalidProperty { key: bad, .. }) if bad == key => return true,
            Err(Error::InvalidProperty { key: bad, .. }) if probe.remove(&bad).is_some() => {}
            Err(_) => return false,
        }
    }
}
