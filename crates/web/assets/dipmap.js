// Province centres of the standard Diplomacy map, placed by hand as [longitude, latitude] of each
// province's middle; the viewer projects them onto a 980×840 plane and cuts the plane into one
// cell per centre. SWI (Switzerland, impassable) and LIB (the Libyan desert, no province) only
// keep their neighbours' cells from spreading.
window.KAKEHIKI_DIP_CENTRES = {
  NAO: [-20, 58], NWG: [3, 66.5], BAR: [38, 71], CLY: [-5, 57.4], EDI: [-2.3, 56.9],
  LVP: [-3.3, 54.1], YOR: [-1, 54.2], WAL: [-4.1, 52.1], LON: [0, 51.5], IRI: [-7.5, 52.8],
  ENG: [-4.5, 49.7], NTH: [3, 56], NWY: [9.5, 61.5], SWE: [15.5, 61.5], FIN: [26.5, 63.5],
  STP: [33, 62.5], SKA: [8.8, 58.3], DEN: [9.8, 55.9], HEL: [7, 54.6], BAL: [17.5, 56.2],
  BOT: [20.5, 62.5], LVN: [25.3, 57.3], MOS: [38, 55.5], PRU: [19.5, 54.3], BER: [13.4, 52.8],
  KIE: [10, 53.7], HOL: [5.4, 52.3], BEL: [4.4, 50.6], PIC: [1.8, 49.9], BRE: [-3, 48],
  PAR: [2.2, 48.2], BUR: [5.2, 47.3], RUH: [7.2, 51.2], MUN: [11.2, 48.6], SIL: [17, 51],
  WAR: [21.7, 51.8], UKR: [31, 49.8], GAL: [24.5, 49], BOH: [14.2, 50], VIE: [16.4, 47.9],
  TYR: [12.2, 46.9], BUD: [20.4, 47.1], RUM: [25.8, 45.4], SEV: [37, 47.2], GAS: [-0.6, 44.5],
  MAR: [5, 43.9], PIE: [7.6, 44.9], VEN: [11.8, 45.3], TRI: [15.8, 45], SER: [21, 44],
  BUL: [25, 42.8], BLA: [34, 43.6], ARM: [42, 40.2], ANK: [33, 41], CON: [28.5, 40.9],
  SMY: [30.5, 38.4], SYR: [38.5, 35.8], EAS: [31, 33.8], AEG: [25, 38.3], GRE: [22, 39.6],
  ALB: [19.8, 41.3], ADR: [15.4, 43.1], APU: [16.6, 41.3], NAP: [15.2, 39.9], ROM: [12.6, 42.2],
  TUS: [10.6, 43.6], TYS: [12, 39.3], ION: [18, 36.5], TUN: [9.5, 34.8], NAF: [1, 33],
  WES: [3.5, 38.3], LYO: [5, 41.6], SPA: [-3.8, 40.2], POR: [-8.6, 39.6], MAO: [-16, 44],
  SWI: [8.2, 46.8], LIB: [20, 30.8],
};
