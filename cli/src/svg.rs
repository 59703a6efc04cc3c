//! A hand-written SVG of a table's file layout: one `<rect class="file">` per data file box,
//! the query window, and a light sample of the data, so clustering can be seen at a glance.
//! A geography box that wraps the antimeridian (`min_x > max_x`) is drawn as the two boxes it
//! is, one at each edge of the map ([`pieces`]).

use std::fmt::Write as _;

use geoberg_geostats::BBox;

use geoberg_pruning::FileBounds;

/// Width of the drawing area in pixels; the height follows the extent's aspect ratio.
const WIDTH: f64 = 800.0;
/// Space for the caption above the map.
const CAPTION: f64 = 28.0;
/// Tallest map, so that a thin extent does not produce a huge picture.
const MAX_HEIGHT: f64 = 800.0;

/// What one picture shows.
#[derive(Debug)]
pub struct LayoutPicture<'a> {
    /// Caption line.
    pub title: String,
    /// The files to draw (files without a box are counted in the caption, not drawn; a box
    /// with `min_x > max_x` wraps the antimeridian and is drawn in two pieces).
    pub files: &'a [FileBounds],
    /// The area drawn; usually the data extent (no wrap: the union of [`pieces`]).
    pub extent: BBox,
    /// A query window, drawn in red (in two pieces when it wraps).
    pub window: Option<BBox>,
    /// Sample points, drawn as dots under the boxes.
    pub points: &'a [(f64, f64)],
}

impl LayoutPicture<'_> {
    /// The SVG document.
    pub fn render(&self) -> String {
        let e = padded(self.extent);
        let (w, h) = (e.max_x - e.min_x, e.max_y - e.min_y);
        let height = (WIDTH * h / w).clamp(40.0, MAX_HEIGHT);
        let sx = WIDTH / w;
        let sy = height / h;
        let px = |x: f64| (x - e.min_x) * sx;
        let py = |y: f64| CAPTION + (e.max_y - y) * sy;
        let unbounded = self.files.iter().filter(|f| f.bbox.is_none()).count();

        let mut s = String::with_capacity(256 + self.files.len() * 96 + self.points.len() * 16);
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH:.0}" height="{:.0}" viewBox="0 0 {WIDTH:.0} {:.0}">"#,
            height + CAPTION,
            height + CAPTION
        );
        s.push_str(
            "<style>.file{fill:#1f77b4;fill-opacity:0.06;stroke:#1f77b4;stroke-width:0.8}\
             .window{fill:none;stroke:#d62728;stroke-width:2}\
             .data{stroke:#555;stroke-opacity:0.5;stroke-width:1.6;stroke-linecap:round}\
             text{font:13px sans-serif}</style>\n",
        );
        let mut caption = format!("{} ({} files", self.title, self.files.len());
        if unbounded > 0 {
            let _ = write!(caption, ", {unbounded} without bounds not drawn");
        }
        caption.push(')');
        let _ = writeln!(s, r#"<text x="4" y="18">{}</text>"#, escape(&caption));
        let _ = writeln!(
            s,
            r##"<rect x="0" y="{CAPTION}" width="{WIDTH:.0}" height="{height:.1}" fill="#fafafa"/>"##
        );
        if !self.points.is_empty() {
            s.push_str(r#"<path class="data" d=""#);
            for &(x, y) in self.points {
                let _ = write!(s, "M{:.1} {:.1}h0", px(x), py(y));
            }
            s.push_str("\"/>\n");
        }
        for b in self.files.iter().filter_map(|f| f.bbox).flat_map(pieces) {
            // Degenerate boxes (one point, one line) still get a visible outline.
            let _ = writeln!(
                s,
                r#"<rect class="file" x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}"/>"#,
                px(b.min_x),
                py(b.max_y),
                ((b.max_x - b.min_x) * sx).max(0.5),
                ((b.max_y - b.min_y) * sy).max(0.5)
            );
        }
        for b in self.window.into_iter().flat_map(pieces) {
            let _ = writeln!(
                s,
                r#"<rect class="window" x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}"/>"#,
                px(b.min_x),
                py(b.max_y),
                (b.max_x - b.min_x) * sx,
                (b.max_y - b.min_y) * sy
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

/// The plain boxes a box covers: itself, or for a geography box that wraps the antimeridian
/// (`min_x > max_x`) its parts east of `min_x` (to 180) and west of `max_x` (from -180).
pub fn pieces(b: BBox) -> impl Iterator<Item = BBox> {
    let (first, second) = if b.min_x > b.max_x {
        (
            BBox::new(b.min_x, b.min_y, 180.0, b.max_y),
            Some(BBox::new(-180.0, b.min_y, b.max_x, b.max_y)),
        )
    } else {
        (b, None)
    };
    std::iter::once(first).chain(second)
}

/// The extent grown by 2% (and made non-degenerate) so boxes on the edge stay visible.
fn padded(e: BBox) -> BBox {
    let w = (e.max_x - e.min_x).abs().max(1e-9);
    let h = (e.max_y - e.min_y).abs().max(1e-9);
    let (dx, dy) = (w * 0.02, h * 0.02);
    BBox::new(
        e.min_x - dx,
        e.min_y - dy,
        e.min_x + w + dx,
        e.min_y + h + dy,
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(b: BBox) -> FileBounds {
        FileBounds::new("f", 1, 1, Some(b))
    }

    #[test]
    fn one_rect_per_bounded_file_and_y_points_down() {
        let files = [
            file(BBox::new(0.0, 0.0, 1.0, 1.0)),
            file(BBox::new(9.0, 9.0, 10.0, 10.0)),
            FileBounds {
                bbox: None,
                ..file(BBox::point(0.0, 0.0))
            },
        ];
        let svg = LayoutPicture {
            title: "a & <b>".into(),
            files: &files,
            extent: BBox::new(0.0, 0.0, 10.0, 10.0),
            window: Some(BBox::new(4.0, 4.0, 6.0, 6.0)),
            points: &[(5.0, 5.0)],
        }
        .render();
        assert_eq!(svg.matches(r#"<rect class="file""#).count(), 2);
        assert_eq!(svg.matches(r#"<rect class="window""#).count(), 1);
        assert!(svg.contains("a &amp; &lt;b&gt; (3 files, 1 without bounds not drawn)"));
        // The north-east file is drawn near the top: small y.
        let ys: Vec<f64> = svg
            .lines()
            .filter(|l| l.starts_with(r#"<rect class="file""#))
            .map(|l| {
                l.split("y=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        assert!(ys[1] < ys[0], "{ys:?}");
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn wrapping_boxes_are_drawn_at_both_edges() {
        let files = [file(BBox::new(170.0, -10.0, -170.0, 10.0))];
        let svg = LayoutPicture {
            title: "fiji".into(),
            files: &files,
            extent: BBox::new(-180.0, -10.0, 180.0, 10.0),
            window: Some(BBox::new(175.0, -5.0, -175.0, 5.0)),
            points: &[],
        }
        .render();
        let rects = |class: &str| -> Vec<f64> {
            svg.lines()
                .filter(|l| l.starts_with(&format!(r#"<rect class="{class}""#)))
                .map(|l| {
                    l.split("x=\"")
                        .nth(1)
                        .unwrap()
                        .split('"')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap()
                })
                .collect()
        };
        for class in ["file", "window"] {
            let xs = rects(class);
            assert_eq!(xs.len(), 2, "{class}: {svg}");
            // One piece at the east edge, one at the west edge.
            assert!(
                xs.iter().any(|&x| x > 700.0) && xs.iter().any(|&x| x < 100.0),
                "{xs:?}"
            );
        }
        assert_eq!(pieces(BBox::new(1.0, 0.0, 2.0, 1.0)).count(), 1);
    }
}
