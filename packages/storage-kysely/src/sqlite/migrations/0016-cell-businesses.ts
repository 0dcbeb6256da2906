/**
 * SQLite migration 16: cells keep their businesses, so sample_size of several metrics counts distinct businesses.
 * Released: never edit this file (../../migrations-manifest.txt holds its hash).
 */
export const name = "cells keep their businesses, so sample_size of several metrics counts distinct businesses";

export const sql = `
-- The cell's business ordinals (uint32 little-endian, ascending), numbered per import; NULL for cells
-- published before (their (category, period) counts as before until it is imported again).
ALTER TABLE cells ADD COLUMN businesses BLOB;
`;
