//! The Lance indexes a graph declares (`[[indexes]]`: vector and full-text), built into the
//! datasets themselves, where Lance's searches find them; and their status.

use crate::catalog::vector_dimension;
use crate::config::{GraphConfig, IndexDecl, IndexKind, VectorMethod, VectorMetric};
use crate::error::{Error, Result};
use lance::index::vector::VectorIndexParams;
use lance::index::DatasetIndexExt;
use lance::Dataset;
use lance_index::scalar::InvertedIndexParams;
use lance_index::vector::hnsw::builder::HnswBuildParams;
use lance_index::vector::ivf::IvfBuildParams;
use lance_index::vector::pq::PQBuildParams;
use lance_index::vector::sq::builder::SQBuildParams;
use lance_index::IndexType;

/// Rows per IVF partition a vector index aims at (each partition is searched whole, or as
/// one HNSW graph).
const ROWS_PER_PARTITION: usize = 100_000;

async fn open(config: &GraphConfig, x: &IndexDecl) -> Result<(Dataset, String)> {
    let (source, columns) = match x.relationship_table(&config.relationships) {
        Some(i) => {
            let r = &config.relationships[i];
            (&r.source, &r.columns)
        }
        None => {
            let n = &config.nodes[&x.table];
            (&n.source, &n.columns)
        }
    };
    let path = config.resolve(source);
    let uri = path.display().to_string();
    let dataset = Dataset::open(&uri)
        .await
        .map_err(|e| Error::storage_caused(format!("opening {uri} for index `{}`", x.name), e))?;
    let column = columns.get(&x.column).unwrap_or(&x.column).clone();
    Ok((dataset, column))
}

/// Builds every declared index its dataset lacks (every one with `force`), saying what it
/// does; returns how many it built. Each build commits a new version of its dataset.
pub async fn build(
    config: &GraphConfig,
    force: bool,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<usize> {
    let mut built = 0;
    for x in &config.indexes {
        let (mut dataset, column) = open(config, x).await?;
        let have = dataset.load_indices().await.map_err(Error::from)?;
        if !force && have.iter().any(|i| i.name == x.name) {
            progress(&format!("index {}: present", x.name));
            continue;
        }
        let rows = dataset.count_rows(None).await.map_err(Error::from)?;
        let t0 = std::time::Instant::now();
        let failed =
            |e: lance::Error| Error::storage_caused(format!("building index `{}`", x.name), e);
        match x.kind {
            IndexKind::Vector => {
                let schema = arrow::datatypes::Schema::from(dataset.schema());
                let dim = schema
                    .field_with_name(&column)
                    .ok()
                    .and_then(|f| vector_dimension(f.data_type()))
                    .unwrap_or(1);
                let params = vector_params(x, rows, dim);
                dataset
                    .create_index(
                        &[&column],
                        IndexType::Vector,
                        Some(x.name.clone()),
                        &params,
                        true,
                    )
                    .await
                    .map_err(failed)?;
            }
            IndexKind::Fulltext => {
                // Positions too, so that phrases can be searched.
                let params = InvertedIndexParams::default().with_position(true);
                dataset
                    .create_index(
                        &[&column],
                        IndexType::Inverted,
                        Some(x.name.clone()),
                        &params,
                        true,
                    )
                    .await
                    .map_err(failed)?;
            }
        }
        progress(&format!(
            "index {}: built over {rows} rows of {}.{} in {:.2}s",
            x.name,
            x.target(),
            x.column,
            t0.elapsed().as_secs_f64()
        ));
        built += 1;
    }
    Ok(built)
}

fn vector_params(x: &IndexDecl, rows: usize, dim: usize) -> VectorIndexParams {
    use lance_linalg::distance::MetricType;
    let metric = match x.metric() {
        VectorMetric::Cosine => MetricType::Cosine,
        VectorMetric::Euclidean => MetricType::L2,
    };
    let partitions = rows.div_ceil(ROWS_PER_PARTITION).max(1);
    match x.method() {
        VectorMethod::IvfHnswSq => VectorIndexParams::with_ivf_hnsw_sq_params(
            metric,
            IvfBuildParams::new(partitions),
            HnswBuildParams::default(),
            SQBuildParams::default(),
        ),
        VectorMethod::IvfPq => {
            // Sub-vectors of 8 values where the dimension allows, else of fewer.
            let sub = (1..=dim.div_ceil(8).max(1))
                .rev()
                .find(|s| dim.is_multiple_of(*s))
                .unwrap_or(1);
            let ivf = IvfBuildParams::new(((rows as f64).sqrt() as usize).max(1));
            let pq = PQBuildParams {
                num_sub_vectors: sub,
                ..Default::default()
            };
            VectorIndexParams::with_ivf_pq_params(metric, ivf, pq)
        }
        VectorMethod::IvfFlat => {
            VectorIndexParams::ivf_flat(((rows as f64).sqrt() as usize).max(1), metric)
        }
    }
}

/// A line per declared index: present (with the rows it does not cover yet, which Lance
/// searches exactly) or missing.
pub async fn status(config: &GraphConfig) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for x in &config.indexes {
        let (dataset, _) = open(config, x).await?;
        let have = dataset.load_indices().await.map_err(Error::from)?;
        let what = match x.kind {
            IndexKind::Vector => format!("vector index ({:?}, {:?})", x.metric(), x.method()),
            IndexKind::Fulltext => "full-text index".to_string(),
        };
        let on = format!("{}: {what} on {}.{}", x.name, x.target(), x.column);
        let line = match have.iter().find(|i| i.name == x.name) {
            None => format!("{on}: not built (searches read every row; `lance-csr index build`)"),
            Some(i) => {
                let covered = i.fragment_bitmap.clone().unwrap_or_default();
                let mut missing = 0;
                for f in dataset.get_fragments() {
                    if !covered.contains(f.id() as u32) {
                        missing += f.count_rows(None).await.map_err(Error::from)?;
                    }
                }
                match missing {
                    0 => format!("{on}: up to date"),
                    n => format!(
                        "{on}: {n} rows added since it was built (searched exactly; \
                         `lance-csr index build --force` takes them in)"
                    ),
                }
            }
        };
        out.push(line);
    }
    Ok(out)
}
