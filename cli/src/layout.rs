//! `geoberg layout`: the data files' boxes as an SVG picture.

use geoberg_geostats::BBox;
use serde_json::json;

use crate::args::{GlobalArgs, LayoutArgs};
use crate::context::{Access, Context, geo_column};
use crate::error::{CliError, Result};
use crate::files::{extent, file_bounds, overlap_depth};
use crate::svg::{LayoutPicture, pieces};

/// Writes the picture.
pub fn run(global: &GlobalArgs, args: &LayoutArgs) -> Result<()> {
    let window = args.window.as_deref().map(parse_window).transpose()?;
    let ctx = Context::open(global, Access::Existing)?;
    let table = ctx.load(&args.table)?;
    let column = geo_column(&table, args.column.as_deref())?;
    let files = file_bounds(&table, &column)?;
    let data = extent(&files);
    let Some(view) = [data]
        .into_iter()
        .flatten()
        .chain(window.into_iter().flat_map(pieces))
        .reduce(|a, b| a.union(&b))
    else {
        return Err(CliError::invalid(
            "table",
            table.ident(),
            "no data file has bounds for its geometry column, so there is nothing to draw",
        ));
    };
    let svg = LayoutPicture {
        title: format!("{} ({})", table.ident(), column.name),
        files: &files,
        extent: view,
        window,
        points: &[],
    }
    .render();
    std::fs::write(&args.svg, svg).map_err(|e| CliError::io(&args.svg, e))?;
    ctx.output.emit(
        format!(
            "wrote {} ({} files, overlap depth {:.2})",
            args.svg.display(),
            files.len(),
            overlap_depth(&files)
        ),
        json!({"svg": args.svg, "files": files.len(), "overlap_depth": overlap_depth(&files)}),
    );
    Ok(())
}

/// Parses `minx,miny,maxx,maxy`; `minx > maxx` is a window across the antimeridian, which
/// only a geography column takes (a scan of a geometry column rejects it, saying so).
pub fn parse_window(text: &str) -> Result<BBox> {
    let bad = |why: &str| {
        CliError::invalid(
            "--window",
            text,
            format!("{why}; write minx,miny,maxx,maxy, e.g. -10,35,5,45"),
        )
    };
    let v: Vec<f64> = text
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| bad("every part must be a number"))?;
    let [min_x, min_y, max_x, max_y] = v[..] else {
        return Err(bad("expected four numbers"));
    };
    if !v.iter().all(|x| x.is_finite()) || min_y > max_y {
        return Err(bad(
            "need finite numbers with miny <= maxy (minx > maxx crosses the antimeridian, on a \
             geography column)",
        ));
    }
    Ok(BBox::new(min_x, min_y, max_x, max_y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse_and_bad_ones_say_why() {
        assert_eq!(
            parse_window("-10, 35,5,45").unwrap(),
            BBox::new(-10.0, 35.0, 5.0, 45.0)
        );
        // Across the antimeridian (geography).
        assert_eq!(
            parse_window("170,-10,-170,10").unwrap(),
            BBox::new(170.0, -10.0, -170.0, 10.0)
        );
        for bad in ["1,2,3", "a,b,c,d", "0,5,1,1", "1,2,3,4,5", "nan,0,1,1"] {
            let e = parse_window(bad).unwrap_err().to_string();
            assert!(e.contains("minx,miny,maxx,maxy"), "{bad}: {e}");
        }
    }
}
