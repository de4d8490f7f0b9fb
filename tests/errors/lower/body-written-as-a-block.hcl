resource x {
  body {
    apiVersion = "v1"
  }
}
