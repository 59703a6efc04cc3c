//! A geoberg [`Catalog`] as a DataFusion catalog: namespaces are schemas, tables are
//! [`GeobergTableProvider`]s; `CREATE TABLE [AS SELECT]` and `CREATE SCHEMA` change the geoberg
//! catalog (`DROP TABLE` is routed to the table crate, for `PURGE`; DataFusion's own
//! deregistration still drops the catalog entry).
//!
//! The default schema ([`SESSION_SCHEMA`], unless a namespace has that name) holds what lives
//! for the session only: views (`CREATE [TEMPORARY] VIEW v AS ...`) and external tables
//! (`CREATE EXTERNAL TABLE f STORED AS PARQUET LOCATION '...'`), named without a namespace.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, MemorySchemaProvider, SchemaProvider};
use datafusion::common::{exec_err, not_impl_err};
use datafusion::datasource::TableProvider;
use datafusion::error::{DataFusionError, Result};
use geoberg_table::{Catalog, TableIdent};

use crate::create::create_from_provider;
use crate::error::table_error;
use crate::handle::TableHandle;
use crate::provider::GeobergTableProvider;

/// The schema of unqualified names: views and external tables of this session.
pub(crate) const SESSION_SCHEMA: &str = "public";

/// What the catalog's schemas share: the geoberg catalog, the tables loaded so far (so that a
/// table's file index outlives one statement), the session's views and external tables, and
/// the notices of the last statements.
#[derive(Debug)]
pub(crate) struct Shared {
    pub catalog: Arc<dyn Catalog>,
    handles: Mutex<HashMap<TableIdent, Arc<TableHandle>>>,
    session: Arc<MemorySchemaProvider>,
    notices: Mutex<Vec<String>>,
}

impl Shared {
    fn handle(&self, ident: &TableIdent) -> Arc<TableHandle> {
        let mut handles = self.handles.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(handles.entry(ident.clone()).or_insert_with(|| {
            Arc::new(TableHandle::new(Arc::clone(&self.catalog), ident.clone()))
        }))
    }

    fn forget(&self, ident: &TableIdent) {
        self.handles
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(ident);
    }

    pub(crate) fn notice(&self, message: String) {
        self.notices
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(message);
    }
}

/// A DataFusion catalog over a geoberg [`Catalog`].
#[derive(Debug, Clone)]
pub struct GeobergCatalogProvider {
    shared: Arc<Shared>,
}

impl GeobergCatalogProvider {
    /// The catalog provider of `catalog`.
    pub fn new(catalog: Arc<dyn Catalog>) -> Self {
        GeobergCatalogProvider {
            shared: Arc::new(Shared {
                catalog,
                handles: Mutex::default(),
                session: Arc::new(MemorySchemaProvider::new()),
                notices: Mutex::default(),
            }),
        }
    }

    /// The geoberg catalog.
    pub fn catalog(&self) -> &Arc<dyn Catalog> {
        &self.shared.catalog
    }

    /// Messages for the user from the statements since the last call (a `CREATE TABLE ... AS
    /// SELECT` whose geometry has no declared CRS, say), oldest first.
    pub fn take_notices(&self) -> Vec<String> {
        std::mem::take(
            &mut *self
                .shared
                .notices
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        )
    }

    /// The provider of a table.
    pub fn table(&self, ident: &TableIdent) -> Result<GeobergTableProvider> {
        GeobergTableProvider::from_handle(self.shared.handle(ident))
    }

    /// The engine's handle of a table (its last loaded version).
    pub(crate) fn handle(&self, ident: &TableIdent) -> Arc<TableHandle> {
        self.shared.handle(ident)
    }
}

impl CatalogProvider for GeobergCatalogProvider {
    fn schema_names(&self) -> Vec<String> {
        // The trait cannot fail; a catalog that cannot list shows no schemas, and naming one
        // reports the catalog's error.
        self.shared.catalog.list_namespaces().unwrap_or_default()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        match self.shared.catalog.namespace_exists(name) {
            Ok(true) => Some(Arc::new(GeobergSchemaProvider {
                shared: Arc::clone(&self.shared),
                namespace: name.to_string(),
            })),
            Ok(false) if name == SESSION_SCHEMA => {
                Some(Arc::clone(&self.shared.session) as Arc<dyn SchemaProvider>)
            }
            _ => None,
        }
    }

    fn register_schema(
        &self,
        name: &str,
        _schema: Arc<dyn SchemaProvider>,
    ) -> Result<Option<Arc<dyn SchemaProvider>>> {
        let existed = self
            .shared
            .catalog
            .namespace_exists(name)
            .map_err(table_error)?;
        self.shared
            .catalog
            .create_namespace(name)
            .map_err(table_error)?;
        Ok(existed.then(|| self.schema(name)).flatten())
    }

    fn deregister_schema(
        &self,
        name: &str,
        _cascade: bool,
    ) -> Result<Option<Arc<dyn SchemaProvider>>> {
        not_impl_err!(
            "DROP SCHEMA {name}: geoberg catalogs cannot drop namespaces yet; drop its tables \
             with DROP TABLE"
        )
    }
}

/// One namespace of a geoberg catalog.
#[derive(Debug)]
pub struct GeobergSchemaProvider {
    shared: Arc<Shared>,
    namespace: String,
}

impl GeobergSchemaProvider {
    fn ident(&self, name: &str) -> Result<TableIdent> {
        TableIdent::new(&self.namespace, name).map_err(table_error)
    }
}

#[async_trait]
impl SchemaProvider for GeobergSchemaProvider {
    fn table_names(&self) -> Vec<String> {
        self.shared
            .catalog
            .list_tables(&self.namespace)
            .map(|tables| tables.iter().map(|t| t.name().to_string()).collect())
            .unwrap_or_default()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let ident = self.ident(name)?;
        let shared = Arc::clone(&self.shared);
        tokio::task::spawn_blocking(move || {
            if shared
                .catalog
                .metadata_location(&ident)
                .map_err(table_error)?
                .is_none()
            {
                return Ok(None);
            }
            let provider = GeobergTableProvider::from_handle(shared.handle(&ident))?;
            Ok(Some(Arc::new(provider) as Arc<dyn TableProvider>))
        })
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))?
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        let ident = self.ident(&name)?;
        if self.table_exist(&name) {
            return exec_err!("table {ident} already exists; drop it first, or INSERT INTO it");
        }
        let notices = create_from_provider(&self.shared.catalog, &ident, table.as_ref())?;
        for n in notices {
            self.shared.notice(n);
        }
        Ok(None)
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let ident = self.ident(name)?;
        let provider = match self.table_exist(name) {
            true => Some(Arc::new(GeobergTableProvider::from_handle(
                self.shared.handle(&ident),
            )?) as Arc<dyn TableProvider>),
            false => None,
        };
        if self
            .shared
            .catalog
            .drop_table(&ident)
            .map_err(table_error)?
        {
            self.shared.notice(format!(
                "dropped table {ident} from the catalog; its data and metadata files stay in \
                 the warehouse"
            ));
        }
        self.shared.forget(&ident);
        Ok(provider)
    }

    fn table_exist(&self, name: &str) -> bool {
        self.ident(name)
            .ok()
            .and_then(|ident| self.shared.catalog.metadata_location(&ident).ok())
            .flatten()
            .is_some()
    }
}
