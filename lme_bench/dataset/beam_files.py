"""The BEAM files `lme-bench dataset download beam-100k|beam-500k` fetches: each chat's
chat.json, its chat_trunecated.json where the repository has one (ten 100K chats, no 500K
chat), and its probing questions at the pinned commit of mohammadtavakoli78/BEAM, with their
sha256 and size in bytes (computed from that commit's blobs). Generated; not BEAM's data."""

from __future__ import annotations

PINNED_FILES: dict[str, tuple[str, int]] = {
    "chats/100K/1/chat.json": (
        "ea71efd5dcc13f7366d3737b45d532eadb3d1497f3d6f23d1fa1c4004d5ffdf2",
        564_977,
    ),
    "chats/100K/1/probing_questions/probing_questions.json": (
        "047398ff1497674b11585e7b4829c3d64d2d5e63f7f3572c826b73ca1faaf898",
        31_547,
    ),
    "chats/100K/2/chat.json": (
        "3a3bd796f4aa24e8f34e718dc2823ae942663349eb89054f03885051e2daf1c4",
        535_114,
    ),
    "chats/100K/2/probing_questions/probing_questions.json": (
        "d188e929644c9ef9fcd4520e7b5a3daf2c2e069b1247a324bd13d5aadd1ed96e",
        29_546,
    ),
    "chats/100K/3/chat.json": (
        "432d3ae5493c04a17a5b6b0ef7c012a70e70ac5cfcaef13059fca6bedb903009",
        552_331,
    ),
    "chats/100K/3/probing_questions/probing_questions.json": (
        "f53030f3753b0e0a93b330bc62d597cb66375c0c794094d7e69b7646df46e324",
        32_522,
    ),
    "chats/100K/4/chat.json": (
        "e0ef0f74b1f7ac911e8e0518722335c422cbc1112048e9909911b208c51fc027",
        720_144,
    ),
    "chats/100K/4/probing_questions/probing_questions.json": (
        "f69eda522cd7325830c8f78b6f02a571c992b6cf43311fa96f28043fd3c18dae",
        34_657,
    ),
    "chats/100K/5/chat.json": (
        "13ac88e483e0d63d3830479fe17f961af1b414503b5077914865eca1c48a1ce8",
        472_696,
    ),
    "chats/100K/5/chat_trunecated.json": (
        "7d4bbb737bb9fc8430500903af321ba681708f472e42a34bd6f5da8ac548dd9a",
        475_450,
    ),
    "chats/100K/5/probing_questions/probing_questions.json": (
        "bdd0819a911e46951dbf998905b8eba96a0cdb103cd3dda79ae9c6831e5f195d",
        29_882,
    ),
    "chats/100K/6/chat.json": (
        "5365cdc41da212fb7143cf9f191ff7862eed8e9ca175b3728fe593adedc87871",
        635_112,
    ),
    "chats/100K/6/probing_questions/probing_questions.json": (
        "7a6f88dfdeb3f1b582209a745e7c980158dbb2829a9ceae6cdb08bb868a00035",
        34_228,
    ),
    "chats/100K/7/chat.json": (
        "525271b1d24179dbc2deb664c69db0bbaead5938630a0b0d5cd2881b8b79224d",
        616_803,
    ),
    "chats/100K/7/chat_trunecated.json": (
        "b3e2d90a1d27970161ec2f179f2a382833bb186a1fdf19b28dfc9cc6aefdf3af",
        618_349,
    ),
    "chats/100K/7/probing_questions/probing_questions.json": (
        "2c00219e839d54c7cd3e4fbb396f8a2517fd9f143d3a3b8ea1c4fb9f5c4435c7",
        32_366,
    ),
    "chats/100K/8/chat.json": (
        "3207b8f5aa45cd1b2d1e2f37f224831b4696d0cc2352ef514af08f2092b6c239",
        570_827,
    ),
    "chats/100K/8/probing_questions/probing_questions.json": (
        "d279dbd8fd293692d29f0057b3dd2468ccb97c7da6df28ae2adc8481d9970148",
        30_609,
    ),
    "chats/100K/9/chat.json": (
        "446777f3eed114c27d62030ad86cfb8ad6610fda0fc83dfe98403b8d68b74bd4",
        630_826,
    ),
    "chats/100K/9/probing_questions/probing_questions.json": (
        "b7ab1c7022c0b7ac6928f4c2efadd08e2a438dc91e1288209df066cdcd5e9573",
        32_766,
    ),
    "chats/100K/10/chat.json": (
        "de18b7b0ad73491f338296b64ae30f16b94d77404420d971d3f6b513d190ad1c",
        722_161,
    ),
    "chats/100K/10/chat_trunecated.json": (
        "b420ff71ac33686522b8c4f80296a5bfc123d80faf3060ce5e6e91ef730b9aaf",
        621_661,
    ),
    "chats/100K/10/probing_questions/probing_questions.json": (
        "e9bf9bb545b350425a770ef65b501434ba9983c7535b4524dd6ae4d5743b5a95",
        32_129,
    ),
    "chats/100K/11/chat.json": (
        "45cb4fab51042278e6a57f524fca4cd4b8941cbbd091f9ec8fb92dad4de31b12",
        966_917,
    ),
    "chats/100K/11/chat_trunecated.json": (
        "f3266874081e5a6048727e3cf4ceda9884b357042293f4d57ade9558ee4b9685",
        657_744,
    ),
    "chats/100K/11/probing_questions/probing_questions.json": (
        "3aa98a74a03be59472834422dd14004d3b432a0c800bbef8f316865834449c08",
        33_044,
    ),
    "chats/100K/12/chat.json": (
        "2654160ebfcbd8a9f7d47a0340503cb301b0f54cb472f93578fa20e78c84c430",
        964_208,
    ),
    "chats/100K/12/chat_trunecated.json": (
        "0229c8ad4fbdd675304bf7832fa3e48a7512493897eb3b68f41d0cf947dcc6e0",
        667_514,
    ),
    "chats/100K/12/probing_questions/probing_questions.json": (
        "c36c9b1d4df0d063d1c7db81b35b5ea4743e38a804382d6e557f37ec46e1d6e3",
        33_666,
    ),
    "chats/100K/13/chat.json": (
        "aea586c143dab53cb5a021b3fab23380d5d9628fea1c4b718f91411019166dc6",
        568_613,
    ),
    "chats/100K/13/probing_questions/probing_questions.json": (
        "02dee0ba1d5576aed8ac535328a23fe4f882f6dcff3b96e039162e10d547236b",
        32_094,
    ),
    "chats/100K/14/chat.json": (
        "43fbffd9ca235a980203faf4c5d6f636e97af4f31f6d91d9cbe42035ab4f0b0d",
        492_497,
    ),
    "chats/100K/14/probing_questions/probing_questions.json": (
        "f30350303b4ccd52a36deaf57750a2bf6924fa5885da92d8230797a82dcfbe5f",
        30_180,
    ),
    "chats/100K/15/chat.json": (
        "e758dfbdfe6d5a6bd060c6577e6f0282eb445fd7f93150208dcd56e8f8676f43",
        476_327,
    ),
    "chats/100K/15/probing_questions/probing_questions.json": (
        "6d6ed59bd8cad87ce279c08f42137c2199502d09f198cfa880ef3ab04debd891",
        28_314,
    ),
    "chats/100K/16/chat.json": (
        "414f11e16156d490cfb8449db62bddae88308e5b37fa79df54b147637f059afd",
        663_564,
    ),
    "chats/100K/16/chat_trunecated.json": (
        "a90a86bfe313ce0f6082a69188a500fc2afad2fe86f2fdb1a21c7610ca2a3385",
        598_174,
    ),
    "chats/100K/16/probing_questions/probing_questions.json": (
        "abf20d16a37322112af0fe48f5c43be0d824d54ae2bb2c5e3e069c6e84c54033",
        30_613,
    ),
    "chats/100K/17/chat.json": (
        "6eb309c34fd98025327bbe46dec8cdfbf76304c249d3f579f02f46cea06eeefe",
        586_847,
    ),
    "chats/100K/17/chat_trunecated.json": (
        "fb2067c1ee096dea1cff5cb0f9eafc88e7c6fea41014aebf9ac96ad4a30592bd",
        585_782,
    ),
    "chats/100K/17/probing_questions/probing_questions.json": (
        "7948981c2e40751bfe9ace82e53497d32229245e6012a2e5d4da2e801c929451",
        30_779,
    ),
    "chats/100K/18/chat.json": (
        "3c08576a5726fa48b9f906bc8699fab37e33cc5219f076f76374f7c1302449cb",
        829_083,
    ),
    "chats/100K/18/chat_trunecated.json": (
        "0b6224918bb4ffa5e51f22b77d40881daeba233d664c7957fe8937a4a2d75ed2",
        628_351,
    ),
    "chats/100K/18/probing_questions/probing_questions.json": (
        "d813db9e2b416e6ac7cc22841b131ea5c80e5931e690f81bb37aa16c3b9edc3a",
        27_006,
    ),
    "chats/100K/19/chat.json": (
        "4c6dd78fa5aa6bd645eab8a3f041eac290c87564fd822582477c8e446979850f",
        806_876,
    ),
    "chats/100K/19/chat_trunecated.json": (
        "dece8764492998bb88c2ec75597bc31c36629483ed1813a6dccdac78ce01bc34",
        637_094,
    ),
    "chats/100K/19/probing_questions/probing_questions.json": (
        "b911651b2b18e835aaac58b2bc3cb018bc782e252b9161dca8174961ca498ce2",
        28_691,
    ),
    "chats/100K/20/chat.json": (
        "af49a279c8ca5eef5829f8155bca89b41b05fb33fef438dce0a6cac8d99a7802",
        894_533,
    ),
    "chats/100K/20/chat_trunecated.json": (
        "774a329b9c43eba22145aadd43203ab6d9a31c1486c70b10b1e2d40908b46758",
        638_168,
    ),
    "chats/100K/20/probing_questions/probing_questions.json": (
        "46b679bffff904fd71ed247f5172e9a4a30ed7eb2fdaacc1d89aac0932e5f043",
        30_564,
    ),
    "chats/500K/1/chat.json": (
        "58c44756cae614e0bfc2cc27e6dcd236d97c255579ac8030cddc840fe71430cf",
        2_024_584,
    ),
    "chats/500K/1/probing_questions/probing_questions.json": (
        "0eba433d5145f1a0479095b44cd7213a0168000f05383f04a36dc8d21626562f",
        38_044,
    ),
    "chats/500K/2/chat.json": (
        "e35cba6056e49d307d179ebea1e581c55e4215c3e03a770278a9b7e23933306c",
        2_219_206,
    ),
    "chats/500K/2/probing_questions/probing_questions.json": (
        "c933641497c3512adf7ad1fd029c31eb4ba24bee36d36fd9ab8fba2ebc35cdaa",
        34_883,
    ),
    "chats/500K/3/chat.json": (
        "1ff21495eb108c34779b6af3a5b3118c57d66e030f9824e80e5a59f1f1fa4905",
        1_944_112,
    ),
    "chats/500K/3/probing_questions/probing_questions.json": (
        "1dfb9c2c4005fefe626caba7c6be3768bdd5c900c0a6cc3e1aa8fad0b0f423ad",
        35_235,
    ),
    "chats/500K/4/chat.json": (
        "f101e055ef1af2e972cba150ff4ebd7f4b685158163e86abfe5afbb7293413a6",
        2_123_005,
    ),
    "chats/500K/4/probing_questions/probing_questions.json": (
        "fbeac67b08058a3944879c671bcf5ce95c1d169b756390db726c65658e2d438b",
        35_772,
    ),
    "chats/500K/5/chat.json": (
        "8bf67a95be5226bf925d5faaec87ec81f5802d7f7d62b77e8c7229722b3242b9",
        2_255_701,
    ),
    "chats/500K/5/probing_questions/probing_questions.json": (
        "d9101159d6ffbc16d0cce7165749dae5eb08dc37d83ad1a0aa53c1e38d794c52",
        34_537,
    ),
    "chats/500K/6/chat.json": (
        "a9e2ad00781f9a954123ad0541d820d7895b7d1d5637abee93eeda61118ef7d8",
        1_504_999,
    ),
    "chats/500K/6/probing_questions/probing_questions.json": (
        "dcbb66bc4cafaa42569f6c128347a68aca6b0d697c7ae01fccc424532ac527ea",
        31_024,
    ),
    "chats/500K/7/chat.json": (
        "6cac5a0a5dc827093bdb7474527cecb410d42f544126cf18e8c6dcf6f4d31a56",
        2_412_177,
    ),
    "chats/500K/7/probing_questions/probing_questions.json": (
        "b96f1b61ceb1a66d5f486c9d4546451b324db4a11b0a28065e1fbc86da819bca",
        35_341,
    ),
    "chats/500K/8/chat.json": (
        "0996744e2b95d301fb35a7dcffbe3d7286320df531960e2f9b8843662eb7f937",
        2_425_175,
    ),
    "chats/500K/8/probing_questions/probing_questions.json": (
        "25d8d5d6ce32fdab9b85744a92900939477b6d00f96d58baf7356bb4e365cf44",
        34_425,
    ),
    "chats/500K/9/chat.json": (
        "ef0aa72a9ec213989d981e7542ce686d8b232f3758b02726d9f86c6d2528b826",
        1_631_358,
    ),
    "chats/500K/9/probing_questions/probing_questions.json": (
        "8a6f67f347c8ae87ddd89b11e7e1c1b5616344029a960befac559f56d9466b53",
        35_039,
    ),
    "chats/500K/10/chat.json": (
        "1675988b164321496d9f81a1783e3408a2c220ece690df9554ba4c27d3304f4f",
        2_153_170,
    ),
    "chats/500K/10/probing_questions/probing_questions.json": (
        "0d0c92b1e2b628532bd9159faab73e45885079f6f3b1e3612968f1647fc177fd",
        33_401,
    ),
    "chats/500K/11/chat.json": (
        "e319300776999872b9aed1f3e284c3f0db75b94d71addd6d1db80a2da260b4d8",
        2_202_847,
    ),
    "chats/500K/11/probing_questions/probing_questions.json": (
        "594e51272adabf68a63aeefc0c0ca55a0b94eb91212ab30fb3a6dda628b27b1d",
        33_607,
    ),
    "chats/500K/12/chat.json": (
        "9bfe7a747659bda066e41b27fef5988e8d47e0ea3a84f662195ca6a069d59708",
        2_273_764,
    ),
    "chats/500K/12/probing_questions/probing_questions.json": (
        "627d8bec6edd334ca180c3ca6540eb6280a21b55a2ef7c1c3f6409ace8b5860a",
        34_525,
    ),
    "chats/500K/13/chat.json": (
        "5d3e0426ddd04c48dddf900665eceef9ef8f4fd1a0c7f17f6dcee32d550dbb78",
        2_910_409,
    ),
    "chats/500K/13/probing_questions/probing_questions.json": (
        "4ca0b8c6bc24448ace2878c2d70c0754c4f9ea49f22c2c1fe467a7ffc4e01d73",
        33_190,
    ),
    "chats/500K/14/chat.json": (
        "29d1e21d3732983189151bc96016577cdef8009b1f107c6f2daf2d09d295ed4b",
        2_936_444,
    ),
    "chats/500K/14/probing_questions/probing_questions.json": (
        "71c407c9f9beefd848824f8dc1d1bed8760f937b952cf88cfaa150ecc1e09dd9",
        33_234,
    ),
    "chats/500K/15/chat.json": (
        "8eef61d80e214aa580ca49e92b5ddbf5a28374efc6dfdd405c29e6d3467e4fe3",
        2_468_834,
    ),
    "chats/500K/15/probing_questions/probing_questions.json": (
        "d0ebb5d5184083fde112e4aced0ef2c671600030f656a5f519fc66d6605ea9fc",
        32_468,
    ),
    "chats/500K/16/chat.json": (
        "88520d6a28843b45081352f16ed23aa97a6b206c09120a63e31a5ee198a4661e",
        2_338_808,
    ),
    "chats/500K/16/probing_questions/probing_questions.json": (
        "baab8017c5de7ab627d2b2a693f1c3dfa821b3a20a75e5486f1f4dadbedd3af7",
        31_347,
    ),
    "chats/500K/17/chat.json": (
        "ea93a7c7045f4842eaed3a251658e6aac6ca9a989eb31a3589851f548cef0b1d",
        2_819_892,
    ),
    "chats/500K/17/probing_questions/probing_questions.json": (
        "58467ded32ad303baedfa08cd568a79f2e4ea3a8cae60a83f5e17d744738bbcf",
        31_060,
    ),
    "chats/500K/18/chat.json": (
        "6c2a1f773e85c5de1f0f01877883ad900eb41bb9268bdce50eef4edf80fe0711",
        2_406_462,
    ),
    "chats/500K/18/probing_questions/probing_questions.json": (
        "3db4c66843b9a35b3e630a578be52ff73ca0272902778d1d2aad98964e706586",
        33_106,
    ),
    "chats/500K/19/chat.json": (
        "9cc25fbdae36bed99f59f25ad2016603e26b3bf603ac28d756d246eb2f3f690d",
        3_009_123,
    ),
    "chats/500K/19/probing_questions/probing_questions.json": (
        "c6f5bac36382f9f10c197db1b2357b4be6b5c0b031fcca5c962f7c2d6f600ea2",
        31_530,
    ),
    "chats/500K/20/chat.json": (
        "a4310f2665e21053700f8057f7d36af1815ed9a62e5ae64bdcef7f030dece777",
        2_779_916,
    ),
    "chats/500K/20/probing_questions/probing_questions.json": (
        "db6eeb8cd0e800d2331fcee16ba69728bb25a9f6aa355bde9f713ee85e415224",
        30_471,
    ),
    "chats/500K/21/chat.json": (
        "36829395dd5d75ab5771250a6b617f063c7620ac70b6b53ceac9ac4a7cb96735",
        2_765_408,
    ),
    "chats/500K/21/probing_questions/probing_questions.json": (
        "0e011e101c011668b67e04a71ff0deb6800136f4c7bf269f6dfe4f3c4ce47c74",
        31_318,
    ),
    "chats/500K/22/chat.json": (
        "b26ef5ae462f09cb316e7d0c79dd5e3625db0c0fd5c25600b30ef54e4f5776c0",
        3_019_259,
    ),
    "chats/500K/22/probing_questions/probing_questions.json": (
        "c3488fba1350b18e9fb84e01c9c2127ad6c20dbd72d9f6fdd3f015bab40230f3",
        33_009,
    ),
    "chats/500K/23/chat.json": (
        "738525ab551b9a2aea3a4210922514483620607e47fd1c4821ce70923b19cc54",
        2_408_208,
    ),
    "chats/500K/23/probing_questions/probing_questions.json": (
        "edf493541f55abde635b490c44ee0e8d72adeb9a22b2e941a0c611cf83006381",
        32_352,
    ),
    "chats/500K/24/chat.json": (
        "4eea409147037d803ffbaed1c6990067782b6faac35f3af97bba7fc2aedc7636",
        2_177_200,
    ),
    "chats/500K/24/probing_questions/probing_questions.json": (
        "230521597cceaf2578d075ac1106094f7d896db3af88bf8753e8cfe8d6e9ab6d",
        29_943,
    ),
    "chats/500K/25/chat.json": (
        "c743ce7178f85a31fda8df8bb72a057fda1821ccc4952eef3d855512d06fd71f",
        2_626_982,
    ),
    "chats/500K/25/probing_questions/probing_questions.json": (
        "9eaafd78feef303271f0938e08592755c701c4917e36f6ab122b397208c724a7",
        31_585,
    ),
    "chats/500K/26/chat.json": (
        "bdc52a3c539af30e4973823079b0616c16bc277fc2668b1a0c211c7e8d006f7f",
        2_327_696,
    ),
    "chats/500K/26/probing_questions/probing_questions.json": (
        "57beceb0651682a2727f7dfb07298fd8ccf9c12acb56e438d20314e9a903af44",
        33_939,
    ),
    "chats/500K/27/chat.json": (
        "30e70862d6b67009a8ad3c7ff9426d95c13492a0e5f0f95a9978bbb1ed404867",
        2_396_071,
    ),
    "chats/500K/27/probing_questions/probing_questions.json": (
        "dfac18c4abcf3a42e31a57ab1a5166407913197ecd1481b4bfb4e924ed924975",
        32_553,
    ),
    "chats/500K/28/chat.json": (
        "0bce8093cce38ddf877858fc83870e5ef8336b3e77a763e9b1097d3d1e1ff822",
        2_503_422,
    ),
    "chats/500K/28/probing_questions/probing_questions.json": (
        "217232907484971467cdf122bcc4eceab0f2f9cc2aec56e8a8c7fd7d08b75058",
        31_294,
    ),
    "chats/500K/29/chat.json": (
        "641aeea8e96f0f403cc500e9bb295654fb9d8893b18094e1b15f575bb48521b8",
        2_120_343,
    ),
    "chats/500K/29/probing_questions/probing_questions.json": (
        "4d56013fe0f9e94b69e9ecb6ec1db5f7ca5648a6cc39ecb900a729797b13c6b3",
        30_455,
    ),
    "chats/500K/30/chat.json": (
        "1a27428bdb93f4b2050cdd2a58dd9c9f27803ee0190cd6c26f0e0c5b19226606",
        2_211_691,
    ),
    "chats/500K/30/probing_questions/probing_questions.json": (
        "5afea3854508d8ec060c5448f69c0b6c4a1b0acb6f7e3eec8016401a3091a364",
        31_377,
    ),
    "chats/500K/31/chat.json": (
        "a8726583a5ed55b6e47f59ec4db45f1ce2c9203b5af4fdaf81005719586e2e54",
        2_526_697,
    ),
    "chats/500K/31/probing_questions/probing_questions.json": (
        "aa8c93c69134d9f28159182fc918c1ec8e54bc61588283cdc5e4e4e3f3189315",
        31_795,
    ),
    "chats/500K/32/chat.json": (
        "0d3cc7ccf87e1510a7953215eefd3612c45739788f586a7a36a1ff287ce16489",
        3_669_882,
    ),
    "chats/500K/32/probing_questions/probing_questions.json": (
        "20d04ec4a80135f4eee0d05241e884e77c504209801e51ca4f456b07fee5c1b5",
        32_200,
    ),
    "chats/500K/33/chat.json": (
        "83ef5ef9cbbd02e3f7bf0898f7a9574a14d0b1ff14f6560bfd0c129ced9b2f68",
        2_238_648,
    ),
    "chats/500K/33/probing_questions/probing_questions.json": (
        "4e6a00a71ba0df48ff9f132ec9b4544e3fd477b65aa7ca8b14f1b7e3fc45f418",
        34_493,
    ),
    "chats/500K/34/chat.json": (
        "e026e43b5677fe4e743f984aab7c4dff355ea6e3d534656fd5c2a8f6fae4a8bc",
        2_448_326,
    ),
    "chats/500K/34/probing_questions/probing_questions.json": (
        "2800116f9fbb00b54f99805beabf53e263236f06080076600ac815f7507359ba",
        30_484,
    ),
    "chats/500K/35/chat.json": (
        "d3e1560a181addb46fb8a1bd6a5ab648f324e66a41575bce94d424000ed2c911",
        2_165_145,
    ),
    "chats/500K/35/probing_questions/probing_questions.json": (
        "e1be0d82a8e694f8092b21b584eb3ac57436bb4719b5f979f673e28f649e33f3",
        31_486,
    ),
}
