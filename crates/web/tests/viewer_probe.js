// Appended to a viewer page by tests/it/viewers.rs: measures what the browser laid out and writes
// it as JSON into a `pre` element with id "probe", which `chromium --dump-dom` then shows.
(function () {
  'use strict';
  const r = {};
  const box = e => e.getBoundingClientRect();
  const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) *
    Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  const rgb = c => {
    const m = /^#([0-9a-f]{6})$/i.exec(c || '');
    if (m) { const n = parseInt(m[1], 16); return [n >> 16, (n >> 8) & 255, n & 255]; }
    const k = /rgba?\((\d+), *(\d+), *(\d+)/.exec(c || '');
    return k ? [Number(k[1]), Number(k[2]), Number(k[3])] : null;
  };
  const lum = c => {
    const [R, G, B] = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * R + 0.7152 * G + 0.0722 * B;
  };
  const contrast = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };

  // Diplomacy: province names against each other, the units and the supply-centre markers;
  // each name's contrast with the territory drawn under its middle.
  const labels = [...document.querySelectorAll('#dip-map text.prov-label')];
  r.labels = labels.length;
  if (labels.length) {
    const marks = [...document.querySelectorAll('#dip-map g.unit, #dip-map circle.sc')];
    const hits = [];
    labels.forEach((l, i) => {
      const a = box(l);
      for (const m of labels.slice(i + 1)) if (overlap(a, box(m)) > 1) hits.push(l.dataset.prov + ' / ' + m.dataset.prov);
      for (const m of marks) if (overlap(a, box(m)) > 1) hits.push(l.dataset.prov + ' / ' + (m.dataset.unit || 'centre ' + m.dataset.prov));
    });
    r.overlaps = hits;
    const layers = [...document.querySelectorAll('#dip-map g.units, #dip-map g.labels, #dip-map g.orders, #dip-map g.coastlines, #dip-map g.borders')];
    layers.forEach(g => { g.style.visibility = 'hidden'; });
    r.contrast = labels.map(l => {
      const a = box(l);
      const under = document.elementFromPoint((a.left + a.right) / 2, (a.top + a.bottom) / 2);
      const bg = under && under.getAttribute('fill');
      return { prov: l.dataset.prov, bg, ratio: bg && rgb(bg) ? contrast(rgb(l.getAttribute('fill')), rgb(bg)) : 0 };
    });
    layers.forEach(g => { g.style.visibility = ''; });
  }

  // Werewolf: every agent of the list inside the list, and the list inside the stage.
  const stage = document.getElementById('kv-stage');
  const alive = document.getElementById('ww-alive');
  if (alive && stage) {
    const s = box(stage), u = box(alive);
    r.alive = {
      agents: alive.children.length,
      list_inside_stage: u.left >= s.left - 0.5 && u.right <= s.right + 0.5,
      outside: [...alive.children].filter(li => { const b = box(li); return b.right > u.right + 0.5 || b.left < u.left - 0.5; }).map(li => li.dataset.agent),
      clipped: [...alive.children].filter(li => li.scrollWidth > li.clientWidth + 0.5).map(li => li.dataset.agent),
    };
  }
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(r);
  document.body.append(pre);
})();
