//! The dataset model: where rows are in space. A model is a "world" (city centres, road
//! polylines) drawn once from the seed, plus a rule that draws row `i` from its own random
//! stream. Both the Arrow generator and the layout simulator read rows through it, so the
//! simulated layouts are layouts of exactly the data the generator writes.

use crate::Crs;
use crate::error::Error;
use crate::rng::SplitMix64;

/// Spatial distribution of the (non-oversized) rows.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Distribution {
    /// Points uniform over the extent: the textbook case the closed-form theory covers.
    Uniform,
    /// Points in Gaussian "cities" with lognormal weights and sizes, plus a uniform background
    /// share: the skew of real address, POI and telemetry data.
    Cities {
        /// Number of cities (≥ 1).
        cities: u32,
        /// Share of rows spread uniformly, in [0, 1].
        background: f64,
    },
    /// Points along random road polylines (GPS traces, road sensors): 1-D skew.
    Roads {
        /// Number of roads (≥ 1).
        roads: u32,
    },
    /// Small jittered quadrilaterals placed like [`Distribution::Cities`] (cadastral parcels).
    Parcels {
        /// Number of cities (≥ 1).
        cities: u32,
        /// Share of parcels spread uniformly, in [0, 1].
        background: f64,
    },
}

impl Distribution {
    /// 200 cities and 5% background, the skewed setup of the reference simulation.
    pub const CITIES: Distribution = Distribution::Cities {
        cities: 200,
        background: 0.05,
    };
    /// 100 roads.
    pub const ROADS: Distribution = Distribution::Roads { roads: 100 };
    /// Parcels placed in 200 cities with 5% background.
    pub const PARCELS: Distribution = Distribution::Parcels {
        cities: 200,
        background: 0.05,
    };

    /// Short name used by the report and the CLI (`uniform`, `cities`, `roads`, `parcels`).
    pub fn name(&self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Cities { .. } => "cities",
            Distribution::Roads { .. } => "roads",
            Distribution::Parcels { .. } => "parcels",
        }
    }

    /// Parses a short name into the default parameters of that distribution.
    pub fn from_name(name: &str) -> Result<Self, Error> {
        match name {
            "uniform" => Ok(Distribution::Uniform),
            "cities" | "skewed" => Ok(Distribution::CITIES),
            "roads" => Ok(Distribution::ROADS),
            "parcels" => Ok(Distribution::PARCELS),
            other => Err(Error::invalid(
                "distribution",
                other,
                "one of uniform, cities (alias skewed), roads, parcels",
            )),
        }
    }
}

/// Shape of a generated geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShapeKind {
    Point,
    LineString,
    Polygon,
}

/// One geometry as coordinates, reused across rows to avoid allocation.
#[derive(Debug, Clone)]
pub(crate) struct Feature {
    pub(crate) kind: ShapeKind,
    pub(crate) coords: Vec<[f64; 2]>,
}

impl Feature {
    pub(crate) fn new() -> Self {
        Self {
            kind: ShapeKind::Point,
            coords: Vec::with_capacity(16),
        }
    }

    /// `[min_x, min_y, max_x, max_y]`; features always have at least one coordinate.
    pub(crate) fn bbox(&self) -> [f64; 4] {
        let mut b = [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ];
        for &[x, y] in &self.coords {
            b[0] = b[0].min(x);
            b[1] = b[1].min(y);
            b[2] = b[2].max(x);
            b[3] = b[3].max(y);
        }
        b
    }

    fn point(&mut self, p: [f64; 2]) {
        self.kind = ShapeKind::Point;
        self.coords.clear();
        self.coords.push(p);
    }
}

// Purposes of the independent random streams.
const STREAM_CITY: u64 = 1;
const STREAM_ROAD: u64 = 2;
const STREAM_ROW: u64 = 3;
pub(crate) const STREAM_SAMPLE_OVERSIZED: u64 = 4;
pub(crate) const STREAM_PAYLOAD: u64 = 5;

/// Parcel half-size on the unit square (about 100 m at the equator in WGS84).
const PARCEL_HALF: f64 = 1.5e-6;
const CITY_SIGMA: f64 = 0.01;
const ROAD_SEGMENTS: usize = 30;
const ROAD_SEGMENT_LEN: f64 = 0.01;
const ROAD_JITTER: f64 = 3e-4;

#[derive(Debug, Clone)]
struct City {
    centre: [f64; 2],
    sigma: f64,
}

/// A seeded dataset: distribution, CRS and oversized share, with its world drawn from the seed.
///
/// Rows are independent draws, so arrival order (row id) carries no spatial order: it is the
/// unsorted layout. Coordinates are produced on the unit square and mapped onto the CRS extent.
#[derive(Debug, Clone)]
pub struct DatasetModel {
    distribution: Distribution,
    crs: Crs,
    seed: u64,
    oversized_fraction: f64,
    oversized_size: f64,
    cities: Vec<City>,
    city_cdf: Vec<f64>,
    roads: Vec<Vec<[f64; 2]>>,
    road_cdf: Vec<f64>,
}

/// Builder for [`DatasetModel`]; every setting has a default, `build` validates them all.
#[derive(Debug, Clone)]
pub struct DatasetModelBuilder {
    distribution: Distribution,
    crs: Crs,
    seed: u64,
    oversized_fraction: f64,
    oversized_size: f64,
}

impl DatasetModelBuilder {
    /// Seed of every random stream (default 42).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// CRS the coordinates are written in (default WGS84).
    pub fn crs(mut self, crs: Crs) -> Self {
        self.crs = crs;
        self
    }

    /// Share of rows that are oversized geometries (large boxes and long lines), in [0, 1);
    /// default 0. These are the outliers that blow up the MBRs of clustered files.
    pub fn oversized_fraction(mut self, fraction: f64) -> Self {
        self.oversized_fraction = fraction;
        self
    }

    /// Side of an oversized geometry relative to the extent, in (0, 1]; default 0.2.
    pub fn oversized_size(mut self, size: f64) -> Self {
        self.oversized_size = size;
        self
    }

    /// Validates the settings and draws the world.
    pub fn build(self) -> Result<DatasetModel, Error> {
        if !(0.0..1.0).contains(&self.oversized_fraction) {
            return Err(Error::invalid(
                "oversized_fraction",
                self.oversized_fraction,
                "a share in [0, 1), e.g. 0.001 for 0.1% oversized rows",
            ));
        }
        if !(self.oversized_size > 0.0 && self.oversized_size <= 1.0) {
            return Err(Error::invalid(
                "oversized_size",
                self.oversized_size,
                "a side relative to the extent in (0, 1], e.g. 0.2",
            ));
        }
        let (cities, background, roads) = match self.distribution {
            Distribution::Uniform => (0, 0.0, 0),
            Distribution::Cities { cities, background }
            | Distribution::Parcels { cities, background } => (cities, background, 0),
            Distribution::Roads { roads } => (0, 0.0, roads),
        };
        let needs_cities = matches!(
            self.distribution,
            Distribution::Cities { .. } | Distribution::Parcels { .. }
        );
        if needs_cities && cities == 0 {
            return Err(Error::invalid(
                "cities",
                cities,
                "at least 1 city, e.g. 200",
            ));
        }
        if !(0.0..=1.0).contains(&background) {
            return Err(Error::invalid(
                "background",
                background,
                "a share in [0, 1], e.g. 0.05",
            ));
        }
        if matches!(self.distribution, Distribution::Roads { .. }) && roads == 0 {
            return Err(Error::invalid("roads", roads, "at least 1 road, e.g. 100"));
        }

        let mut city_list = Vec::with_capacity(cities as usize);
        let mut city_weights = Vec::with_capacity(cities as usize);
        for i in 0..u64::from(cities) {
            let mut r = SplitMix64::for_item(self.seed, STREAM_CITY, i);
            let centre = [r.uniform(0.05, 0.95), r.uniform(0.05, 0.95)];
            let sigma = CITY_SIGMA * (0.5 * r.normal()).exp();
            city_weights.push(r.normal().exp());
            city_list.push(City { centre, sigma });
        }
        let mut road_list = Vec::with_capacity(roads as usize);
        let mut road_weights = Vec::with_capacity(roads as usize);
        for i in 0..u64::from(roads) {
            let mut r = SplitMix64::for_item(self.seed, STREAM_ROAD, i);
            let mut p = [r.next_f64(), r.next_f64()];
            let mut heading = r.uniform(0.0, std::f64::consts::TAU);
            let mut line = vec![p];
            for _ in 0..ROAD_SEGMENTS {
                heading += 0.25 * r.normal();
                p = clamp_unit([
                    p[0] + ROAD_SEGMENT_LEN * heading.cos(),
                    p[1] + ROAD_SEGMENT_LEN * heading.sin(),
                ]);
                line.push(p);
            }
            road_weights.push(r.normal().exp());
            road_list.push(line);
        }
        Ok(DatasetModel {
            distribution: self.distribution,
            crs: self.crs,
            seed: self.seed,
            oversized_fraction: self.oversized_fraction,
            oversized_size: self.oversized_size,
            cities: city_list,
            city_cdf: cdf(&city_weights),
            roads: road_list,
            road_cdf: cdf(&road_weights),
        })
    }
}

impl DatasetModel {
    /// Starts a builder for `distribution` with seed 42, WGS84 and no oversized rows.
    pub fn builder(distribution: Distribution) -> DatasetModelBuilder {
        DatasetModelBuilder {
            distribution,
            crs: Crs::Wgs84,
            seed: 42,
            oversized_fraction: 0.0,
            oversized_size: 0.2,
        }
    }

    /// The distribution of non-oversized rows.
    pub fn distribution(&self) -> Distribution {
        self.distribution
    }

    /// The CRS coordinates are written in.
    pub fn crs(&self) -> Crs {
        self.crs
    }

    /// The seed of every stream.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Share of oversized rows.
    pub fn oversized_fraction(&self) -> f64 {
        self.oversized_fraction
    }

    /// Row `row` on the unit square.
    pub(crate) fn unit_row(&self, row: u64, out: &mut Feature) {
        let mut r = SplitMix64::for_item(self.seed, STREAM_ROW, row);
        let oversized = self.oversized_fraction > 0.0 && r.next_f64() < self.oversized_fraction;
        if oversized {
            self.unit_oversized(&mut r, out);
        } else {
            self.unit_normal(&mut r, out);
        }
    }

    /// Whether row `row` is oversized, without drawing its geometry.
    pub(crate) fn is_oversized(&self, row: u64) -> bool {
        let mut r = SplitMix64::for_item(self.seed, STREAM_ROW, row);
        self.oversized_fraction > 0.0 && r.next_f64() < self.oversized_fraction
    }

    pub(crate) fn unit_normal(&self, r: &mut SplitMix64, out: &mut Feature) {
        let p = self.anchor(r);
        match self.distribution {
            Distribution::Parcels { .. } => {
                let h = PARCEL_HALF * (0.3 * r.normal()).exp();
                let mut jitter = |dx: f64, dy: f64| {
                    clamp_unit([
                        p[0] + h * (dx + 0.3 * r.uniform(-1.0, 1.0)),
                        p[1] + h * (dy + 0.3 * r.uniform(-1.0, 1.0)),
                    ])
                };
                let ring = [
                    jitter(-1.0, -1.0),
                    jitter(1.0, -1.0),
                    jitter(1.0, 1.0),
                    jitter(-1.0, 1.0),
                ];
                out.kind = ShapeKind::Polygon;
                out.coords.clear();
                out.coords.extend_from_slice(&ring);
                out.coords.push(ring[0]);
            }
            _ => out.point(p),
        }
    }

    /// A large box or a long line anchored where the data is.
    pub(crate) fn unit_oversized(&self, r: &mut SplitMix64, out: &mut Feature) {
        let p = self.anchor(r);
        let s = self.oversized_size;
        out.coords.clear();
        if r.next_f64() < 0.5 {
            let [x0, y0] = clamp_unit([p[0] - s / 2.0, p[1] - s / 2.0]);
            let [x1, y1] = clamp_unit([p[0] + s / 2.0, p[1] + s / 2.0]);
            out.kind = ShapeKind::Polygon;
            out.coords
                .extend_from_slice(&[[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]]);
        } else {
            out.kind = ShapeKind::LineString;
            let mut heading = r.uniform(0.0, std::f64::consts::TAU);
            let mut q = p;
            out.coords.push(q);
            for _ in 0..8 {
                heading += 0.3 * r.normal();
                q = clamp_unit([
                    q[0] + s / 8.0 * heading.cos(),
                    q[1] + s / 8.0 * heading.sin(),
                ]);
                out.coords.push(q);
            }
        }
    }

    /// A location drawn from the distribution.
    fn anchor(&self, r: &mut SplitMix64) -> [f64; 2] {
        match self.distribution {
            Distribution::Uniform => [r.next_f64(), r.next_f64()],
            Distribution::Cities { background, .. } | Distribution::Parcels { background, .. } => {
                if r.next_f64() < background {
                    [r.next_f64(), r.next_f64()]
                } else {
                    let c = &self.cities[pick(&self.city_cdf, r.next_f64())];
                    clamp_unit([
                        c.centre[0] + c.sigma * r.normal(),
                        c.centre[1] + c.sigma * r.normal(),
                    ])
                }
            }
            Distribution::Roads { .. } => {
                let road = &self.roads[pick(&self.road_cdf, r.next_f64())];
                let seg = r.below((road.len() - 1) as u64) as usize;
                let (a, b) = (road[seg], road[seg + 1]);
                let t = r.next_f64();
                clamp_unit([
                    a[0] + t * (b[0] - a[0]) + ROAD_JITTER * r.normal(),
                    a[1] + t * (b[1] - a[1]) + ROAD_JITTER * r.normal(),
                ])
            }
        }
    }
}

fn clamp_unit([x, y]: [f64; 2]) -> [f64; 2] {
    [x.clamp(0.0, 1.0), y.clamp(0.0, 1.0)]
}

/// Normalized cumulative weights.
fn cdf(weights: &[f64]) -> Vec<f64> {
    let total: f64 = weights.iter().sum();
    let mut acc = 0.0;
    weights
        .iter()
        .map(|w| {
            acc += w / total;
            acc
        })
        .collect()
}

/// Index of the first cdf entry ≥ u (clamped for rounding at the top).
fn pick(cdf: &[f64], u: f64) -> usize {
    cdf.partition_point(|&c| c < u).min(cdf.len() - 1)
}
