//! Iceberg's metadata tables in SQL: `SELECT * FROM ns.t.files` (also `snapshots`, `history`,
//! `refs`, `manifests`, `data_files`, `delete_files`, `partitions`), as Spark names them.
//!
//! DataFusion reads `ns.t.files` as catalog `ns`, schema `t`, table `files`; the catalog list
//! installed here answers a catalog name that is no catalog but a namespace of the geoberg
//! catalog with that namespace's tables as schemas, each holding its metadata tables. Real
//! catalogs keep precedence. The rows come from `geoberg_table::Table::metadata_table`, read
//! when the statement is planned.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, CatalogProviderList, SchemaProvider};
use datafusion::common::plan_err;
use datafusion::datasource::{MemTable, TableProvider};
use datafusion::error::{DataFusionError, Result};
use geoberg_table::{MetadataTable, TableIdent};

use crate::catalog::GeobergCatalogProvider;
use crate::error::table_error;

/// A catalog list that adds `<namespace>` "catalogs" of metadata tables to `inner`.
#[derive(Debug)]
pub(crate) struct MetadataTablesCatalogList {
    inner: Arc<dyn CatalogProviderList>,
    geoberg: GeobergCatalogProvider,
}

impl MetadataTablesCatalogList {
    pub(crate) fn new(
        inner: Arc<dyn CatalogProviderList>,
        geoberg: GeobergCatalogProvider,
    ) -> Self {
        MetadataTablesCatalogList { inner, geoberg }
    }
}

impl CatalogProviderList for MetadataTablesCatalogList {
    fn register_catalog(
        &self,
        name: String,
        catalog: Arc<dyn CatalogProvider>,
    ) -> Option<Arc<dyn CatalogProvider>> {
        self.inner.register_catalog(name, catalog)
    }

    fn catalog_names(&self) -> Vec<String> {
        self.inner.catalog_names()
    }

    fn catalog(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        if let Some(catalog) = self.inner.catalog(name) {
            return Some(catalog);
        }
        match self.geoberg.catalog().namespace_exists(name) {
            Ok(true) => Some(Arc::new(NamespaceMetadataTables {
                geoberg: self.geoberg.clone(),
                namespace: name.to_string(),
            })),
            _ => None,
        }
    }
}

/// A namespace seen as a catalog: each table is a schema of metadata tables.
#[derive(Debug)]
struct NamespaceMetadataTables {
    geoberg: GeobergCatalogProvider,
    namespace: String,
}

impl CatalogProvider for NamespaceMetadataTables {
    fn schema_names(&self) -> Vec<String> {
        self.geoberg
            .catalog()
            .list_tables(&self.namespace)
            .map(|tables| tables.iter().map(|t| t.name().to_string()).collect())
            .unwrap_or_default()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        let ident = TableIdent::new(&self.namespace, name).ok()?;
        match self.geoberg.catalog().metadata_location(&ident) {
            Ok(Some(_)) => Some(Arc::new(TableMetadataTables {
                geoberg: self.geoberg.clone(),
                ident,
            })),
            _ => None,
        }
    }
}

/// The metadata tables of one table.
#[derive(Debug)]
struct TableMetadataTables {
    geoberg: GeobergCatalogProvider,
    ident: TableIdent,
}

#[async_trait]
impl SchemaProvider for TableMetadataTables {
    fn table_names(&self) -> Vec<String> {
        MetadataTable::ALL
            .iter()
            .map(|t| t.name().to_string())
            .collect()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let Some(which) = MetadataTable::from_name(name) else {
            let names: Vec<&str> = MetadataTable::ALL.iter().map(|t| t.name()).collect();
            return plan_err!(
                "{}.{name}: {} has no metadata table {name:?}; its metadata tables are {}",
                self.ident,
                self.ident,
                names.join(", ")
            );
        };
        let handle = self.geoberg.handle(&self.ident);
        let batch = tokio::task::spawn_blocking(move || handle.current()?.metadata_table(which))
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))?
            .map_err(table_error)?;
        let table = MemTable::try_new(batch.schema(), vec![vec![batch]])?;
        Ok(Some(Arc::new(table)))
    }

    fn table_exist(&self, name: &str) -> bool {
        MetadataTable::from_name(name).is_some()
    }
}
