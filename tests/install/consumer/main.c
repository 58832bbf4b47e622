/* Signs the published GET test vector through the installed library and
 * prints the signature; the test compares it with the published one. */
#include <stdio.h>
#include <string.h>

#include <ocisbx/ocisbx.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: consumer KEY.pem\n");
        return 2;
    }
    ocisbx_key *key = NULL;
    ocisbx_sign_request *req = NULL;
    ocisbx_headers *headers = NULL;
    int rc = ocisbx_key_load_file(argv[1], NULL, &key);
    if (rc == 0)
        rc = ocisbx_sign_request_new(
            "GET",
            "https://iaas.us-phoenix-1.oraclecloud.com/20160918/instances?availabilityDomain=Pjwf%3A%20PHX-AD-1"
            "&compartmentId=ocid1.compartment.oc1..aaaaaaaam3we6vgnherjq5q2idnccdflvjsnog7mlr6rtdb25gilchfeyjxa"
            "&displayName=TeamXInstances&volumeId=ocid1.volume.oc1.phx."
            "abyhqljrgvttnlx73nmrwfaux7kcvzfs3s66izvxf2h4lgvyndsdsnoiwr5q",
            &req);
    if (rc == 0)
        rc = ocisbx_sign_request_set_date(req, "Thu, 05 Jan 2014 21:31:40 GMT");
    if (rc == 0)
        rc = ocisbx_sign_with_key("t/u/f", key, req, &headers);
    if (rc != 0) {
        fprintf(stderr, "consumer: %s\n", ocisbx_error_message(ocisbx_error_last()));
        return 1;
    }
    const char *auth = ocisbx_headers_get(headers, "authorization");
    const char *sig = auth ? strstr(auth, "signature=\"") : NULL;
    printf("libocisbx %s\n%s\nfeatures 0x%x\n", ocisbx_version(), sig ? sig : "(none)", ocisbx_features());
    /* the installed ocisbx/version.h agrees with the installed library */
    if (strcmp(ocisbx_version(), OCISBX_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: library %s, header %s\n", ocisbx_version(), OCISBX_VERSION_STRING);
        sig = NULL;
    }
    ocisbx_headers_free(headers);
    ocisbx_sign_request_free(req);
    ocisbx_key_free(key);
    return sig ? 0 : 1;
}
