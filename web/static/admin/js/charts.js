// Charts drawn as inline SVG: no library, no network. Each chart is a set
// of lines over days, with its numbers in a <title> per point (hover) and
// an aria-label that says what it shows, for readers who cannot see it.

const svgNS = 'http://www.w3.org/2000/svg';

/**
 * s builds an SVG element.
 * @param {string} tag
 * @param {Record<string, string|number>} [attrs]
 * @param {...(Node|string)} children
 * @returns {SVGElement}
 */
function s(tag, attrs, ...children) {
  const el = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  el.append(...children);
  return el;
}

/**
 * @typedef {object} Series
 * @property {string} label
 * @property {Array<number|null>} values one a day (or hour); null where there is no data
 * @property {string} color
 * @property {boolean} [showZero] draw a dot at 0 too (a rate, where 0 is news)
 * @property {string} [summary] what the aria-label says of it; the sum by default
 */

const width = 420;
const height = 150;
const pad = { left: 56, right: 8, top: 10, bottom: 22 };

/**
 * lineChart draws series over days or hours: a line each, a dot a
 * bucket, the axis scaled to the largest value.
 * @param {string} name what the chart shows (its data-chart attribute)
 * @param {string[]} days YYYY-MM-DD, or YYYY-MM-DD HH:00 for hours, one per value
 * @param {Series[]} series
 * @param {(n: number) => string} format how a value reads
 * @param {number} [ceiling] the axis's top (100 for a percentage); by default the largest value rounded up
 * @returns {SVGElement}
 */
export function lineChart(name, days, series, format, ceiling) {
  const max = Math.max(0, ...series.flatMap((x) => x.values.map((v) => v || 0)));
  const top = ceiling || (max > 0 ? niceCeiling(max) : 1);
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const x = (i) => pad.left + (days.length > 1 ? (i * plotW) / (days.length - 1) : plotW / 2);
  const y = (v) => pad.top + plotH - (v / top) * plotH;
  const totals = series.map((x) => `${x.label} ${x.summary ?? format(x.values.reduce((a, b) => a + (b || 0), 0))}`).join(', ');
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'data-chart': name,
    'aria-label': `${name}, ${days[0]} to ${days[days.length - 1]}: ${totals}`,
  });
  for (const frac of [0, 0.5, 1]) {
    const v = top * frac;
    svg.append(s('line', { x1: pad.left, x2: width - pad.right, y1: y(v), y2: y(v), class: 'grid' }),
      s('text', { x: pad.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }, format(v)));
  }
  if (days.length) {
    svg.append(s('text', { x: pad.left, y: height - 6, class: 'tick' }, days[0].slice(5)),
      s('text', { x: width - pad.right, y: height - 6, 'text-anchor': 'end', class: 'tick' }, days[days.length - 1].slice(5)));
  }
  for (const line of series) {
    // A null value is a day without data: the line breaks there.
    const runs = [[]];
    line.values.forEach((v, i) => {
      if (v === null) runs.push([]);
      else runs[runs.length - 1].push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
    });
    for (const run of runs.filter((r) => r.length)) {
      svg.append(s('polyline', { points: run.join(' '), fill: 'none', stroke: line.color, 'stroke-width': 2, 'data-series': line.label }));
    }
    line.values.forEach((v, i) => {
      if (v === null || (v === 0 && !line.showZero)) return;
      svg.append(s('circle', { cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 3, fill: line.color, 'data-series': line.label },
        s('title', {}, `${days[i]} · ${line.label}: ${format(v)}`)));
    });
  }
  return svg;
}

/**
 * legend names each series in its color.
 * @param {Series[]} series
 * @returns {HTMLElement}
 */
export function legend(series) {
  const el = document.createElement('p');
  el.className = 'legend';
  for (const x of series) {
    const key = document.createElement('span');
    key.className = 'key';
    key.style.background = x.color;
    el.append(key, x.label + ' ');
  }
  return el;
}

/**
 * niceCeiling rounds n up to 1, 2 or 5 times a power of ten, so the axis
 * reads in round numbers.
 * @param {number} n
 * @returns {number}
 */
function niceCeiling(n) {
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 5, 10]) if (n <= m * p) return m * p;
  return 10 * p;
}
