// Recording's records and every export use the seed's names; re-export them so code that
// imports Recording (Export, the executable, tests) sees `FaceSchema` and `ActionUnits`.
@_exported import FaceNames
