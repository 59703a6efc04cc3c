//! Sort orders against a table's schema: the checks behind `write.sort-order` and
//! `rewrite_data_files(sort_order => ...)`, and the row order the rewrite crate runs.

use geoberg_rewrite::{RowOrder, SortColumn, ZOrderTerm};
use geoberg_sql::{NullOrder, SortDirection, SortOrder};
use iceberg::spec::{PrimitiveType, Schema, Type};

use crate::error::{Error, Result};
use crate::table::Table;

/// Checks that every column of `order` exists and fits: a plain column sort takes no geometry
/// or geography column (their WKB bytes have no useful order), `hilbert(...)` takes one, and
/// `zorder(...)` takes geo columns and primitive ones.
pub(crate) fn check_sort_order(table: &Table, order: &SortOrder) -> Result<()> {
    check_columns(
        table.metadata().current_schema(),
        |c| table.geo_columns().iter().any(|g| g.name == c),
        &table.ident().to_string(),
        order,
    )
}

/// [`check_sort_order`] on a schema whose geo columns `is_geo` names (`CREATE TABLE`, before
/// the table exists).
pub(crate) fn check_columns(
    schema: &Schema,
    is_geo: impl Fn(&str) -> bool,
    table: &str,
    order: &SortOrder,
) -> Result<()> {
    for column in order.columns() {
        let Some(field) = schema.field_by_name(column) else {
            return Err(Error::NoSuchColumn {
                table: table.to_string(),
                column: column.to_string(),
                available: schema
                    .as_struct()
                    .fields()
                    .iter()
                    .map(|f| f.name.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let geo = is_geo(column);
        let binary = *field.field_type == Type::Primitive(PrimitiveType::Binary);
        match order {
            SortOrder::Columns(_) if geo => {
                return Err(Error::WrongColumnType {
                    column: column.to_string(),
                    found: "a geo column".into(),
                    expected: format!(
                        "a column with an order; WKB bytes sort meaninglessly, so sort a geo \
                         column with hilbert({column}, 16) or zorder({column}), or sort by its \
                         bbox columns"
                    ),
                });
            }
            SortOrder::Hilbert(_) if !(geo || binary) => {
                return Err(Error::WrongColumnType {
                    column: column.to_string(),
                    found: field.field_type.to_string(),
                    expected: "a geometry or geography column for hilbert(...); sort other \
                               columns by name or with zorder(...)"
                        .into(),
                });
            }
            _ if geo => {}
            _ => match &*field.field_type {
                Type::Primitive(_) => {}
                other => {
                    return Err(Error::WrongColumnType {
                        column: column.to_string(),
                        found: other.to_string(),
                        expected: "a primitive column (number, string, binary, boolean, date, \
                                   time or timestamp) to sort by; nested columns sort by their \
                                   fields, as s.a"
                            .into(),
                    });
                }
            },
        }
    }
    Ok(())
}

/// The rewrite crate's row order for a checked column or z-order sort order (Hilbert orders
/// keep their own path).
pub(crate) fn row_order(table: &Table, order: &SortOrder) -> Result<RowOrder> {
    check_sort_order(table, order)?;
    Ok(match order {
        SortOrder::Columns(fields) => RowOrder::Columns {
            columns: fields
                .iter()
                .map(|f| SortColumn {
                    column: f.column.clone(),
                    descending: f.direction == SortDirection::Descending,
                    nulls_first: f.null_order == NullOrder::First,
                })
                .collect(),
        },
        SortOrder::ZOrder(columns) => RowOrder::ZOrder {
            terms: columns
                .iter()
                .map(|c| ZOrderTerm {
                    column: c.clone(),
                    geometry: table.geo_columns().iter().any(|g| &g.name == c),
                })
                .collect(),
        },
        SortOrder::Hilbert(_) => RowOrder::Hilbert,
    })
}

/// The table's `write.sort-order`, or [`Error::NoSortOrder`] naming the property and an
/// example.
pub(crate) fn table_sort_order(table: &Table) -> Result<SortOrder> {
    table
        .properties()?
        .sort_order
        .ok_or_else(|| Error::NoSortOrder {
            table: table.ident().to_string(),
        })
}

/// The Iceberg sort order (`sort-orders` in the metadata) of a column sort order: identity
/// transforms of the columns, with their directions and null orders, so that Iceberg readers and
/// writers see how the files are sorted. Z-order and Hilbert have no Iceberg transform: `None`
/// (the table's default order is then unsorted, as Spark's z-order rewrite leaves it).
pub(crate) fn iceberg_sort_order(
    schema: &Schema,
    order: &SortOrder,
) -> Option<iceberg::spec::SortOrder> {
    let SortOrder::Columns(fields) = order else {
        return None;
    };
    let fields = fields
        .iter()
        .map(|f| {
            Some(iceberg::spec::SortField {
                source_id: schema.field_by_name(&f.column)?.id,
                transform: iceberg::spec::Transform::Identity,
                direction: match f.direction {
                    SortDirection::Ascending => iceberg::spec::SortDirection::Ascending,
                    SortDirection::Descending => iceberg::spec::SortDirection::Descending,
                },
                null_order: match f.null_order {
                    NullOrder::First => iceberg::spec::NullOrder::First,
                    NullOrder::Last => iceberg::spec::NullOrder::Last,
                },
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(iceberg::spec::SortOrder {
        order_id: 0,
        fields,
    })
}

/// `builder` with the default sort order that `write.sort-order` = `value` (or its absence)
/// means: the column order added and made default, else the unsorted order (id 0).
pub(crate) fn with_default_sort_order(
    builder: iceberg::spec::TableMetadataBuilder,
    schema: &Schema,
    value: Option<&str>,
) -> Result<iceberg::spec::TableMetadataBuilder> {
    let order = value
        .and_then(|v| geoberg_sql::parse_sort_order(v).ok())
        .and_then(|o| iceberg_sort_order(schema, &o));
    Ok(match order {
        Some(order) => builder.add_sort_order(order)?.set_default_sort_order(-1)?,
        None => builder.set_default_sort_order(0)?,
    })
}

/// The `sort_order_id` of a data file written in `order`: the table's default sort order id
/// when `order` is the table's `write.sort-order` and that is a column order recorded in the
/// metadata, else none.
pub(crate) fn file_sort_order_id(table: &Table, order: &RowOrder) -> Option<i32> {
    let id = table.metadata().default_sort_order_id();
    if id == 0 || !matches!(order, RowOrder::Columns { .. }) {
        return None;
    }
    let declared = table.properties().ok()?.sort_order?;
    (row_order(table, &declared).ok()? == *order).then_some(id as i32)
}
