//! `SHOW CREATE TABLE`: a table rendered back as the statement that creates it.

use std::fmt::Write as _;

use crate::schema::{DataType, PartitionField, data_type_from_iceberg, quote_name};
use crate::table::Table;

impl Table {
    /// Renders the table as `SHOW CREATE TABLE` does: `geom GEOMETRY(4326)`, legacy columns as
    /// bare `GEOMETRY`, partitioning and properties.
    pub fn show_create_table(&self, catalog_name: &str) -> String {
        let md = self.metadata();
        let schema = md.current_schema();
        let mut out = format!("CREATE TABLE {catalog_name}.{} (\n", self.ident());
        let fields = schema.as_struct().fields();
        for (i, f) in fields.iter().enumerate() {
            let ty = match self.geo_columns().iter().find(|g| g.field_id == f.id) {
                Some(g) => DataType::Geo(g.column_type.clone()).to_string(),
                None => data_type_from_iceberg(&f.field_type).to_string(),
            };
            let not_null = if f.required { " NOT NULL" } else { "" };
            let sep = if i + 1 == fields.len() { ")" } else { ",\n" };
            let _ = write!(out, "{} {ty}{not_null}{sep}", quote_name(&f.name));
        }
        out.push_str("\nUSING iceberg");
        let spec = md.default_partition_spec();
        if !spec.fields().is_empty() {
            let parts: Vec<String> = spec
                .fields()
                .iter()
                .filter_map(|pf| {
                    let column = schema.field_by_id(pf.source_id)?.name.clone();
                    Some(
                        PartitionField {
                            column,
                            transform: pf.transform,
                        }
                        .render(),
                    )
                })
                .collect();
            let _ = write!(out, "\nPARTITIONED BY ({})", parts.join(", "));
        }
        let mut props: Vec<(&String, &String)> = md.properties().iter().collect();
        props.sort();
        let mut rendered = vec![format!(
            "  'format-version' = '{}'",
            md.format_version() as u8
        )];
        rendered.extend(props.into_iter().map(|(k, v)| format!("  '{k}' = '{v}'")));
        let _ = write!(out, "\nTBLPROPERTIES (\n{})\n", rendered.join(",\n"));
        out
    }
}
