//! The coordinate systems data is generated in.

/// Coordinate reference system of generated geometries. Distributions are defined on the unit
/// square and mapped linearly onto the CRS extent, so the same seed gives the same picture in
/// either CRS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Crs {
    /// EPSG:4326 longitude/latitude, extent [-180, -90, 180, 90].
    #[default]
    Wgs84,
    /// EPSG:3857 Web Mercator metres, the square extent ±20037508.34 on both axes.
    WebMercator,
}

/// Half-width of the square Web Mercator extent in metres.
const WEB_MERCATOR_HALF: f64 = 20_037_508.34;

impl Crs {
    /// SRID written into EWKB values.
    pub fn srid(self) -> u32 {
        match self {
            Crs::Wgs84 => 4326,
            Crs::WebMercator => 3857,
        }
    }

    /// `[min_x, min_y, max_x, max_y]` of the area data is generated in.
    pub fn extent(self) -> [f64; 4] {
        match self {
            Crs::Wgs84 => [-180.0, -90.0, 180.0, 90.0],
            Crs::WebMercator => [
                -WEB_MERCATOR_HALF,
                -WEB_MERCATOR_HALF,
                WEB_MERCATOR_HALF,
                WEB_MERCATOR_HALF,
            ],
        }
    }

    /// The CRS a table column holding this data declares.
    pub fn declared(self) -> geoberg_crs::Crs {
        geoberg_crs::Crs::Epsg(self.srid() as i32)
    }

    /// The geometry column type of a table holding this data.
    pub fn column_type(self) -> geoberg_crs::ColumnType {
        geoberg_crs::ColumnType::geometry(self.declared())
    }

    /// Maps a unit-square point onto the extent.
    pub(crate) fn map(self, [u, v]: [f64; 2]) -> [f64; 2] {
        let [x0, y0, x1, y1] = self.extent();
        [x0 + u * (x1 - x0), y0 + v * (y1 - y0)]
    }

    /// The `crs` value of GeoArrow field metadata.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Crs::Wgs84 => "EPSG:4326",
            Crs::WebMercator => "EPSG:3857",
        }
    }
}
