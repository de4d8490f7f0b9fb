locals {
  region = "us-east-1"
}
resource x {
  locals {
    region = "eu-west-1"
  }
  body = {}
}
