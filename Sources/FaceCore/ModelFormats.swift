// The readers of outside data (TFLite, zip, .npy, facekit's model file) and the graph they
// produce live in FaceModelFormats, which is compiled with bounds and overflow checks in every
// build; FaceCore itself is compiled -Ounchecked for its engines. Clients of FaceCore see the
// formats as part of it.
@_exported import FaceModelFormats
