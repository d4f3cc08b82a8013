//! COPY input readers (placeholder, being written).
