/**
 * The measures both sides take of a photo of a document: the hosted page on the camera's frame or the
 * chosen file, the server again on what it receives. Pure functions over pixels, with no Node or browser
 * API, so that the page and the server judge a document by the same numbers and the same limits.
 *
 * What the framing measure does: it looks for the document's four edges as long straight steps of
 * brightness (a card against a darker or lighter background), and reads the box they make. What it does
 * not: it cannot tell a document from any other card-like thing, it does not see a document on a
 * background of its own brightness (a white card on a white table: refused as not framed), and a long
 * straight line inside the document (a portrait's border) or in the background can be taken for an
 * edge, so a document slightly cut off on that side may pass. The server reads the portrait too.
 */
import type { DocumentProblem } from './face-checks.port.js';
import { type Box, type Pixels, glareShare, sharpness } from './face-measures.js';

/**
 * The limits a document image must meet. Set on synthetic cards (src/face-checks/document-measures.spec.ts):
 * a sharp card measures 150 or more, the same blurred by 2 pixels under 20.
 */
export const DOCUMENT_LIMITS = {
  /** The shorter side of the image, in pixels: below this the printed characters are unreadable. */
  minShortSidePx: 480,
  /** Variance of the Laplacian over the document (inside its edges) at 512 pixels and mean luma 128. */
  minSharpness: 40,
  /** Share of the document's pixels burnt out (all three channels at 250 or more): a lamp's reflection on a laminate. */
  maxGlareShare: 0.04,
  /** The document's box over the frame: an ID card held to fill the guide covers about half. */
  minFillShare: 0.3,
  /** A step of brightness this large (0 to 255) across two cells of the grid counts as an edge. */
  minEdgeContrast: 24,
  /** An edge is an unbroken run of such steps this long, as a share of the frame's side along it. */
  minEdgeRun: 0.2,
  /** Each edge at least this share of the frame's side inside it: an edge on the border is a cut-off document. */
  minEdgeMargin: 0.01,
} as const;

/** The grid's longer side: edges are looked for on the image averaged down to it. */
const GRID_SIDE = 256;
/** Sharpness and glare are read this share inside the edges, so the edge itself does not count as detail. */
const INSET = 0.04;

/** What the checks measured of one document image. */
export interface DocumentMeasures {
  readonly widthPx: number;
  readonly heightPx: number;
  /** The document's box in pixels, or null when its four edges were not all found inside the frame. */
  readonly box: Box | null;
  readonly fillShare: number;
  readonly sharpness: number;
  readonly glareShare: number;
}

/** Luma averaged down to a `gw` by `gh` grid. */
function grid(image: Pixels, gw: number, gh: number): Float32Array {
  const cells = new Float32Array(gw * gh);
  const counts = new Uint32Array(gw * gh);
  const { width, height, data } = image;
  for (let y = 0; y < height; y++) {
    const row = Math.min(gh - 1, Math.floor((y * gh) / height)) * gw;
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const cell = row + Math.min(gw - 1, Math.floor((x * gw) / width));
      cells[cell] += 0.299 * data[i] + 0.587 * data[i + 1] + 0.114 * data[i + 2];
      counts[cell]++;
    }
  }
  for (let i = 0; i < cells.length; i++) cells[i] /= Math.max(1, counts[i]);
  return cells;
}

/** The longest unbroken run of edge steps along line `index` (a column when `vertical`). */
function longestRun(g: Float32Array, gw: number, gh: number, index: number, vertical: boolean, contrast: number): number {
  let best = 0;
  let run = 0;
  const length = vertical ? gh : gw;
  for (let k = 0; k < length; k++) {
    const step = vertical ? g[k * gw + index + 1] - g[k * gw + index - 1] : g[(index + 1) * gw + k] - g[(index - 1) * gw + k];
    run = Math.abs(step) >= contrast ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best;
}

/** The outermost edges on either side of the middle, in grid cells; null for a side without one inside its margin. */
function edges(g: Float32Array, gw: number, gh: number, vertical: boolean, limits: typeof DOCUMENT_LIMITS): [number, number] | null {
  const across = vertical ? gw : gh;
  const along = vertical ? gh : gw;
  const margin = Math.max(2, Math.ceil(limits.minEdgeMargin * across));
  const isEdge = (index: number) => longestRun(g, gw, gh, index, vertical, limits.minEdgeContrast) >= limits.minEdgeRun * along;
  let first = -1;
  for (let i = 1; i < across / 2; i++) {
    if (isEdge(i)) {
      first = i;
      break;
    }
  }
  let last = -1;
  for (let i = across - 2; i > across / 2; i--) {
    if (isEdge(i)) {
      last = i;
      break;
    }
  }
  if (first < margin || last < 0 || last > across - 1 - margin) return null;
  return [first, last];
}

/** Where the document is in the image: the box of its four edges in pixels, or null. */
export function documentBox(image: Pixels, limits: typeof DOCUMENT_LIMITS = DOCUMENT_LIMITS): Box | null {
  const landscape = image.width >= image.height;
  const gw = landscape ? GRID_SIDE : Math.max(8, Math.round((GRID_SIDE * image.width) / image.height));
  const gh = landscape ? Math.max(8, Math.round((GRID_SIDE * image.height) / image.width)) : GRID_SIDE;
  const g = grid(image, gw, gh);
  const columns = edges(g, gw, gh, true, limits);
  const rows = edges(g, gw, gh, false, limits);
  if (columns === null || rows === null) return null;
  const sx = image.width / gw;
  const sy = image.height / gh;
  return [columns[0] * sx, rows[0] * sy, (columns[1] - columns[0] + 1) * sx, (rows[1] - rows[0] + 1) * sy];
}

/** Measures one document image: its size, where the document is, how sharp, how much glare. */
export function measureDocument(image: Pixels, limits: typeof DOCUMENT_LIMITS = DOCUMENT_LIMITS): DocumentMeasures {
  const box = documentBox(image, limits);
  const area: Box = box ?? [0, 0, image.width, image.height];
  const inside: Box = [area[0] + area[2] * INSET, area[1] + area[3] * INSET, area[2] * (1 - 2 * INSET), area[3] * (1 - 2 * INSET)];
  return {
    widthPx: image.width,
    heightPx: image.height,
    box,
    fillShare: box === null ? 0 : (box[2] * box[3]) / (image.width * image.height),
    sharpness: sharpness(image, inside, 512),
    glareShare: glareShare(image, inside),
  };
}

/** The problems of a document image from its measures, in the order a person should fix them. */
export function documentProblems(m: DocumentMeasures, limits: typeof DOCUMENT_LIMITS = DOCUMENT_LIMITS): DocumentProblem[] {
  const problems: DocumentProblem[] = [];
  if (Math.min(m.widthPx, m.heightPx) < limits.minShortSidePx) problems.push('low_resolution');
  if (m.box === null) problems.push('document_not_framed');
  else if (m.fillShare < limits.minFillShare) problems.push('document_too_small');
  if (m.sharpness < limits.minSharpness) problems.push('blurred');
  if (m.glareShare > limits.maxGlareShare) problems.push('glare');
  return problems;
}
