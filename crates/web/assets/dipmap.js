// Province sites of the standard Diplomacy map as [longitude, latitude]; the viewer projects them
// onto a 980×840 plane and cuts the plane into one Voronoi cell per site. KAKEHIKI_DIP_CENTRES
// holds each province's middle (where its units, name and supply centre are drawn), placed by
// hand and then nudged (at most about 2°) until every adjacency of the map is a shared border:
// every coast touches each sea it borders, every pair of neighbours shares a border, and no land
// touches a sea it does not border. KAKEHIKI_DIP_EXTRA adds sites that give long provinces
// their shape (the Mid-Atlantic down to Gibraltar, Norway and St Petersburg in the far north).
// SWI (Switzerland, impassable) and LIB (the Libyan desert, no province) only keep their
// neighbours' cells from spreading.
window.KAKEHIKI_DIP_CENTRES = {
  NAO: [-20.8, 57.0], NWG: [3.2, 64.7], BAR: [38.0, 71.0], CLY: [-6.6, 57.7], EDI: [-3.7, 57.4], LVP: [-2.8, 55.4], YOR: [-0.4, 54.5], WAL: [-3.5, 53.6],
  LON: [-0.4, 52.5], IRI: [-9.8, 54.3], ENG: [-6.3, 49.9], NTH: [4.1, 55.6], NWY: [8.7, 61.9], SWE: [13.3, 60.7], FIN: [24.0, 64.5], STP: [33.3, 62.0],
  SKA: [9.6, 59.6], DEN: [9.5, 57.4], HEL: [9.3, 55.4], BAL: [17.7, 57.1], BOT: [22.6, 60.9], LVN: [27.5, 56.0], MOS: [39.8, 56.4], PRU: [18.9, 54.5],
  BER: [15.8, 53.4], KIE: [12.5, 54.1], HOL: [7.9, 53.6], BEL: [5.4, 50.8], PIC: [0.9, 48.9], BRE: [-2.9, 48.5], PAR: [-0.2, 46.9], BUR: [6.3, 48.1],
  RUH: [8.7, 51.2], MUN: [10.6, 47.8], SIL: [18.5, 51.7], WAR: [23.3, 51.8], UKR: [29.7, 50.6], GAL: [23.9, 48.9], BOH: [14.9, 48.8], VIE: [16.3, 47.1],
  TYR: [13.0, 45.7], BUD: [21.3, 47.8], RUM: [26.6, 46.7], SEV: [36.0, 48.7], GAS: [0.1, 44.9], MAR: [2.5, 43.0], PIE: [9.1, 44.5], VEN: [13.6, 43.6],
  TRI: [17.8, 44.2], SER: [22.9, 43.0], BUL: [26.9, 43.6], BLA: [32.9, 43.4], ARM: [40.0, 39.8], ANK: [33.6, 41.0], CON: [29.5, 42.1], SMY: [32.7, 38.1],
  SYR: [40.0, 37.1], EAS: [28.5, 33.0], AEG: [25.9, 40.0], GRE: [23.4, 41.0], ALB: [20.1, 42.4], ADR: [17.4, 42.1], APU: [15.0, 41.1], NAP: [13.4, 39.3],
  ROM: [12.3, 41.4], TUS: [8.9, 42.3], TYS: [10.5, 37.8], ION: [17.2, 36.3], TUN: [10.0, 33.2], NAF: [0.1, 33.0], WES: [1.0, 37.3], LYO: [4.5, 41.5],
  SPA: [-2.5, 39.8], POR: [-10.5, 38.1], MAO: [-14.5, 44.7], SWI: [8.2, 46.8], LIB: [20, 30.8],
};
window.KAKEHIKI_DIP_EXTRA = {
  BAR: [[22, 71.6], [14, 71.8]],
  NWY: [[17, 68.6], [22.5, 69.3]],
  STP: [[27.5, 69.2], [33, 67]],
  ENG: [[1.4, 51.0]],
  LVP: [[-5.6, 55.4]],
  NAO: [[-9.8, 56.4]],
  MAO: [[-10, 35.2], [-5.2, 36.2]],
  ION: [[18.7, 39.9]],
  MOS: [[28.5, 53.6]],
  GAL: [[19.6, 49.6]],
  MUN: [[12.6, 50.5]],
};
